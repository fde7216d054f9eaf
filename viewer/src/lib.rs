//! etscope's egui widgets: the graph canvas (layered layout, culling, level of detail, minimap),
//! the inspector, search, profile table / rollup / timeline / heat overlay, the estimate on a
//! core and two captures compared, memory map, tensor views and exports, over a [`document::Document`] built from `core` data.
//!
//! **Architecture invariant:** no eframe, no file dialogs, no file IO: widgets take data and
//! state per call; the app owns windows, files and persistence.

pub mod args;
pub mod category;
pub mod cost_view;
pub mod diff_view;
pub mod document;
pub mod export;
pub mod fit_view;
pub mod graph_view;
pub mod inspector;
pub mod layout;
pub mod memory_view;
pub mod neighborhood;
pub mod paint;
pub mod profile_compare_view;
pub mod profile_view;
pub mod search;
pub mod stage_compare;
pub mod stage_view;
pub mod tensor_view;
pub mod view_layout;
