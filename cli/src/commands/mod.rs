//! The commands: thin glue between the arguments and the layers below.

pub mod run;
