//! Test harnesses shared by innoxide test suites (filled in below).
