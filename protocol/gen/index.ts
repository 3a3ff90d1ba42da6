// The generated protobuf code of floe_control.proto (`npm run protocol:gen` rewrites the *.gen.ts
// files; this index is written by hand). Internal to protocol/: nothing outside it imports these.
export * from './floe_control_pb.gen.ts'
