// The coordinator: drives one dataset's commit rounds and makes the Iceberg commit (issue #5).
// Imports protocol/ and shared/, never participant/.
export {}
