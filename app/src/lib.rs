//! The etscope application: the headless CLI and the eframe desktop window.

pub mod board;
pub mod board_check;
pub mod cli;
pub mod diff_side;
pub mod eval_runner;
pub mod firmware_files;
pub mod gui;
pub mod job;
pub mod load;
pub mod part_spec;
pub mod siblings;
pub mod sweep;
mod table;
