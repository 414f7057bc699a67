//! The generated code compiles in a module that shadows `Option`, `Result`, `Vec`, `String`
//! and `Box`.

/// Shadows `std::option::Option`.
pub struct Option;
/// Shadows `std::result::Result`.
pub struct Result;
/// Shadows `std::vec::Vec`.
pub struct Vec;
/// Shadows `std::string::String`.
pub struct String;
/// Shadows `std::boxed::Box`.
pub struct Box;

include!(concat!(env!("OUT_DIR"), "/sample_informers.rs"));
