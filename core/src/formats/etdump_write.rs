//! Writes an [`ETDump`] as ExecuTorch's `ETDumpGen` does: a size-prefixed FlatBuffer with the
//! `ED00` identifier, readable by [`ETDump::parse`] and by ExecuTorch's own Inspector. The
//! profiler uses it to turn a live event stream into the one format everything downstream reads.

use flatbuffers::{FlatBufferBuilder, WIPOffset};

use crate::formats::etdump::{DebugValue, ETDump, Event, RunData, TensorRef};
use crate::formats::generated::etdump::etdump as fb;
use crate::formats::generated::etdump::executorch_flatbuffer::ScalarType as FbScalarType;

type Fbb<'a> = FlatBufferBuilder<'a>;

fn tensor<'a>(fbb: &mut Fbb<'a>, t: &TensorRef) -> WIPOffset<fb::Tensor<'a>> {
    let sizes = fbb.create_vector(&t.sizes);
    let strides = fbb.create_vector(&t.strides);
    fb::Tensor::create(
        fbb,
        &fb::TensorArgs {
            scalar_type: FbScalarType(t.scalar_type.code()),
            sizes: Some(sizes),
            strides: Some(strides),
            offset: t.offset,
        },
    )
}

fn value<'a>(fbb: &mut Fbb<'a>, v: &DebugValue, is_output: bool) -> WIPOffset<fb::Value<'a>> {
    let mut args = fb::ValueArgs::default();
    match v {
        DebugValue::Null => args.val = fb::ValueType::Null,
        DebugValue::Int(i) => {
            args.val = fb::ValueType::Int;
            args.int_value = Some(fb::Int::create(fbb, &fb::IntArgs { int_val: *i }));
        }
        DebugValue::Bool(b) => {
            args.val = fb::ValueType::Bool;
            args.bool_value = Some(fb::Bool::create(fbb, &fb::BoolArgs { bool_val: *b }));
        }
        DebugValue::Float(f) => {
            args.val = fb::ValueType::Float;
            args.float_value = Some(fb::Float::create(fbb, &fb::FloatArgs { float_val: *f }));
        }
        DebugValue::Double(d) => {
            args.val = fb::ValueType::Double;
            args.double_value = Some(fb::Double::create(fbb, &fb::DoubleArgs { double_val: *d }));
        }
        DebugValue::Tensor(t) => {
            args.val = fb::ValueType::Tensor;
            args.tensor = Some(tensor(fbb, t));
        }
        DebugValue::TensorList(ts) => {
            args.val = fb::ValueType::TensorList;
            let items: Vec<_> = ts.iter().map(|t| tensor(fbb, t)).collect();
            let tensors = fbb.create_vector(&items);
            args.tensor_list = Some(fb::TensorList::create(
                fbb,
                &fb::TensorListArgs {
                    tensors: Some(tensors),
                },
            ));
        }
        DebugValue::String(_) => args.val = fb::ValueType::String,
    }
    if is_output {
        args.output = Some(fb::Bool::create(fbb, &fb::BoolArgs { bool_val: true }));
    }
    fb::Value::create(fbb, &args)
}

fn event<'a>(fbb: &mut Fbb<'a>, e: &Event) -> WIPOffset<fb::Event<'a>> {
    let mut args = fb::EventArgs::default();
    match e {
        Event::Profile(p) => {
            let name = fbb.create_string(&p.name);
            let id_str = p
                .delegate_debug_id_str
                .as_deref()
                .map(|s| fbb.create_string(s));
            let metadata = (!p.delegate_debug_metadata.is_empty())
                .then(|| fbb.create_vector(&p.delegate_debug_metadata));
            args.profile_event = Some(fb::ProfileEvent::create(
                fbb,
                &fb::ProfileEventArgs {
                    name: Some(name),
                    chain_index: p.chain_index,
                    instruction_id: p.instruction_id,
                    delegate_debug_id_int: p.delegate_debug_id_int,
                    delegate_debug_id_str: id_str,
                    delegate_debug_metadata: metadata,
                    start_time: p.start_time,
                    end_time: p.end_time,
                },
            ));
        }
        Event::Allocation(a) => {
            args.allocation_event = Some(fb::AllocationEvent::create(
                fbb,
                &fb::AllocationEventArgs {
                    allocator_id: a.allocator_id,
                    allocation_size: a.allocation_size,
                },
            ));
        }
        Event::Debug(d) => {
            let entry = value(fbb, &d.value, d.is_program_output);
            let id_str = d
                .delegate_debug_id_str
                .as_deref()
                .map(|s| fbb.create_string(s));
            let name = d.name.as_deref().map(|s| fbb.create_string(s));
            args.debug_event = Some(fb::DebugEvent::create(
                fbb,
                &fb::DebugEventArgs {
                    chain_index: d.chain_index,
                    instruction_id: d.instruction_id,
                    debug_entry: Some(entry),
                    delegate_debug_id_int: d.delegate_debug_id_int,
                    delegate_debug_id_str: id_str,
                    name,
                },
            ));
        }
        Event::Empty => {}
    }
    fb::Event::create(fbb, &args)
}

fn run<'a>(fbb: &mut Fbb<'a>, r: &RunData) -> WIPOffset<fb::RunData<'a>> {
    let name = fbb.create_string(&r.name);
    let allocators: Vec<_> = r
        .allocators
        .iter()
        .map(|a| {
            let name = fbb.create_string(a);
            fb::Allocator::create(fbb, &fb::AllocatorArgs { name: Some(name) })
        })
        .collect();
    let allocators = fbb.create_vector(&allocators);
    let events: Vec<_> = r.events.iter().map(|e| event(fbb, e)).collect();
    let events = fbb.create_vector(&events);
    fb::RunData::create(
        fbb,
        &fb::RunDataArgs {
            name: Some(name),
            bundled_input_index: r.bundled_input_index,
            allocators: Some(allocators),
            events: Some(events),
        },
    )
}

impl ETDump {
    /// The size-prefixed `ED00` FlatBuffer ExecuTorch writes (`.etdp`).
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut fbb = FlatBufferBuilder::with_capacity(1024);
        let runs: Vec<_> = self.runs.iter().map(|r| run(&mut fbb, r)).collect();
        let runs = fbb.create_vector(&runs);
        let root = fb::ETDump::create(
            &mut fbb,
            &fb::ETDumpArgs {
                version: self.version,
                run_data: Some(runs),
            },
        );
        fbb.finish_size_prefixed(root, Some("ED00"));
        fbb.finished_data().to_vec()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shipped_etdump_survives_a_write_and_a_read() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../assets/tiny_conv_relu_linear/etdump.etdp"
        );
        let bytes = std::fs::read(path).expect("shipped sample");
        let original = ETDump::parse(&bytes).expect("parses");
        let written = original.to_bytes();
        assert_eq!(ETDump::parse(&written).expect("reparses"), original);
        assert_eq!(&written[8..12], b"ED00");
    }
}
