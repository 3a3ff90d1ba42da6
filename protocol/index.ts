// The control protocol: protobuf envelopes and the START-COMMIT, END-COMMIT, WRITE-STATUS and
// ACK-COMMIT bodies on the control topic (issue #5). Imports only shared/.
export {}
