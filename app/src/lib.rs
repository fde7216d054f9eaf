//! The etscope application: the headless CLI and the eframe desktop window.

pub mod board;
pub mod cli;
pub mod gui;
pub mod job;
mod load;
pub mod siblings;
mod table;
