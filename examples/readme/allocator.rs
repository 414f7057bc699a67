// A binary's global allocator: the test binary of this crate takes it.
// statements
