//! Tablespaces: files of pages (`file`) and page allocation within them (`fsp`).
//! (InnoDB: fil0fil, fsp0fsp.)

pub mod file;
pub mod fsp;
