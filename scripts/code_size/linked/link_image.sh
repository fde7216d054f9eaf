#!/bin/bash
# Link a real bare-metal ExecuTorch image for one .pte and measure it.
#   link_image.sh FILE.pte m55|m4|m0p NAME [etscope-part]
# MAIN=runner (default): main also prepares inputs (extension/runner_util, as the Arm
# executor_runner links extension_runner_util) and reads/logs outputs.
# MAIN=minimal: load + load_method + execute only.
# Output: /tmp/linkimg/build/NAME/{image.elf,image.map,size.txt,breakdown.json}
# Inputs (read-only): /tmp/codesize (ExecuTorch 455652a2 sources + objects compiled by
# measure.py with the exact flags etscope's tables came from), CMSIS-NN dbf45dbf sources in
# /tmp/linkimg/cmsis-nn, ExecuTorch 455652a2 codegen/ in /tmp/linkimg/et, the 1.5.1 wheel venv
# (/tmp/etvenv: torchgen, selective_build for reading ops out of the .pte).
set -euo pipefail
PTE=$(readlink -f "$1"); CPU=$2; NAME=$3; PART=${4:-}
ROOT=/tmp/linkimg; CS=/tmp/codesize; ET=$CS/src/executorch; PY=/tmp/etvenv/bin/python
case $CPU in
  m55) CPUF="-mcpu=cortex-m55 -mfloat-abi=hard"; OBJ=$CS/work/obj/cortex-m55; PART=${PART:-corstone-300};;
  m4)  CPUF="-mcpu=cortex-m4 -mfloat-abi=hard -mfpu=fpv4-sp-d16"; OBJ=$CS/work/obj/cortex-m4; PART=${PART:-nucleo-l4r5zi};;
  m0p) CPUF="-mcpu=cortex-m0plus -mfloat-abi=soft"; OBJ=$CS/work/obj/cortex-m0plus; PART=${PART:-nucleo-g0b1re};;
  *) echo "cpu must be m55, m4 or m0p" >&2; exit 2;;
esac
# Exactly measure.py's flags (COMMON + DEFINES + include layout).
COMMON="-mthumb -ffunction-sections -fdata-sections -fno-exceptions -fno-rtti -fno-unwind-tables -std=c++17 -DNDEBUG -Wno-psabi -Wno-deprecated-declarations -DC10_USING_CUSTOM_GENERATED_MACROS -DET_MIN_LOG_LEVEL=Info -DET_ENABLE_PROGRAM_VERIFICATION=0 -DET_ENABLE_DEPRECATED_CONSTANT_BUFFER=0 -DFLATBUFFERS_MAX_ALIGNMENT=1024"
INC="-I$CS/work/inc -I$CS/work/gen -I$ET/runtime/core/portable_type/c10 -I$CS/src/flatbuffers/include -I$ROOT/cmsis-nn/Include"
CXX="arm-none-eabi-g++ $CPUF $COMMON $INC"

LIB=$ROOT/lib/$CPU; B=$ROOT/build/$NAME
mkdir -p $LIB $B; rm -f $B/*.o $B/*.a

# 1. Libraries (once per CPU). ExecuTorch objects are reused from /tmp/codesize as archives,
#    so the linker pulls in only the members something references (as CMake's static libs).
if [ ! -f $LIB/.done ]; then
  rm -f $LIB/*.a
  ( cd $OBJ && arm-none-eabi-ar rcs $LIB/libexecutorch_core.a \
      $(find runtime -name '*.o' ! -name posix.o | sort) schema/extended_header.o )
  arm-none-eabi-ar rcs $LIB/libportable_kernels.a $OBJ/kernels/portable/cpu/op_*.o
  arm-none-eabi-ar rcs $LIB/libkernels_util.a $OBJ/kernels/portable/cpu/util/*.o \
      $(ls $OBJ/kernels/portable/cpu/pattern/*.o 2>/dev/null) $(ls $OBJ/kernels/quantized/cpu/embeddingxb.o 2>/dev/null)
  arm-none-eabi-ar rcs $LIB/libquantized_kernels.a $OBJ/kernels/quantized/cpu/op_*.o
  arm-none-eabi-ar rcs $LIB/libcortex_m_kernels.a $OBJ/backends/cortex_m/ops/op_*.o
  # CMSIS-NN from source, as scripts/code_size/cmsis_nn.py compiles it (-O3, per CPU).
  mkdir -p $LIB/cmsis-nn
  for c in $(find $ROOT/cmsis-nn/Source -name '*.c' | sort); do
    o=$LIB/cmsis-nn/$(basename ${c%.c}).o
    arm-none-eabi-gcc $CPUF -O3 -mthumb -ffunction-sections -fdata-sections -std=c99 \
        -I$ROOT/cmsis-nn/Include -c $c -o $o &
    while [ $(jobs -r | wc -l) -ge 4 ]; do sleep 0.1; done
  done; wait || true
  # The float sources (arm_*_f16/f32.c) fail without ARM_NN_ENABLE_F32/F16, as in
  # cmsis_nn.py's failures list; no int8 program needs them.
  arm-none-eabi-ar rcs $LIB/libcmsis-nn.a $LIB/cmsis-nn/*.o
  # Prim-op kernels (arm_prim_ops_lib_impl), runtime class (-Oz).
  for f in et_copy_index et_view; do
    $CXX -Oz -c $ET/kernels/prim_ops/$f.cpp -o $LIB/$f.o
  done
  arm-none-eabi-ar rcs $LIB/libprim_ops_impl.a $LIB/et_copy_index.o $LIB/et_view.o
  touch $LIB/.done
fi

# 2. Selective build, as backends/arm/cmake/ArmRunnerUtils.cmake does with ET_PTE_FILE_PATH:
#    gen_oplist --model_file_path, then codegen.gen per family, gen_selected_prim_ops.
G=$B/gen; rm -rf $G; mkdir -p $G
TG=$($PY -c "import torchgen,os;print(os.path.dirname(torchgen.__file__))")
( cd $ROOT/et
  $PY -m codegen.tools.gen_oplist --output_path=$G/selected_operators.yaml --model_file_path=$PTE >$G/oplist.log 2>&1
  for fam in portable quantized cortex_m; do
    case $fam in
      portable) Y="--functions-yaml-path=$ET/kernels/portable/functions.yaml";;
      quantized) Y="--custom-ops-yaml-path=$ET/kernels/quantized/quantized.yaml";;
      cortex_m) Y="--custom-ops-yaml-path=$ET/backends/cortex_m/ops/operators.yaml";;
    esac
    mkdir -p $G/$fam
    $PY -m codegen.gen --source-path=$ROOT/et/codegen --install-dir=$G/$fam \
      --tags-path=$TG/packaged/ATen/native/tags.yaml \
      --aten-yaml-path=$TG/packaged/ATen/native/native_functions.yaml \
      --op-selection-yaml-path=$G/selected_operators.yaml $Y >$G/$fam.log 2>&1
  done
  $PY -m codegen.tools.gen_selected_prim_ops --op-selection-yaml-path=$G/selected_operators.yaml --output-dir=$G >>$G/oplist.log 2>&1 )

# 3. Compile the program-specific pieces.
for fam in portable quantized cortex_m; do   # registration libs: ops-lib class (-O3)
  $CXX -O3 -I$G/$fam -c $G/$fam/RegisterCodegenUnboxedKernelsEverything.cpp -o $B/reg_$fam.o
done
$CXX -Oz -DET_PRIM_OPS_SELECTIVE_BUILD -DEXECUTORCH_ENABLE_PRIM_OPS_SELECTIVE_BUILD \
  -I$ET/kernels/prim_ops -I$G -c $ET/kernels/prim_ops/register_prim_ops.cpp -o $B/reg_prim_ops.o
MAIN=${MAIN:-runner}
if [ "$MAIN" = runner ]; then
  $CXX -Oz -DRUNNER_LIKE -c $ROOT/src/main.cpp -o $B/main.o
  for f in inputs inputs_portable; do   # extension_runner_util, runtime class (-Oz)
    $CXX -Oz -c $ET/extension/runner_util/$f.cpp -o $B/runner_util_$f.o
  done
  arm-none-eabi-ar rcs $B/libextension_runner_util.a $B/runner_util_inputs.o $B/runner_util_inputs_portable.o
  RU=$B/libextension_runner_util.a
else
  $CXX -Oz -c $ROOT/src/main.cpp -o $B/main.o; RU=
fi
arm-none-eabi-gcc $CPUF -mthumb -Os -ffunction-sections -fdata-sections -c $ROOT/src/startup.c -o $B/startup.o
arm-none-eabi-gcc $CPUF -mthumb -DPTE_FILE="\"$PTE\"" -c $ROOT/src/pte.S -o $B/pte.o

# 4. Link: registration objects always kept (the runner links them --whole-archive),
#    kernel/runtime/CMSIS-NN archives resolved on demand, newlib-nano, gc-sections.
arm-none-eabi-g++ $CPUF -mthumb -Wl,--gc-sections --specs=nano.specs --specs=nosys.specs \
  -T $ROOT/src/image.ld -Wl,-Map=$B/image.map -Wl,--cref -o $B/image.elf \
  $B/startup.o $B/main.o $B/pte.o $B/reg_portable.o $B/reg_quantized.o $B/reg_cortex_m.o $B/reg_prim_ops.o \
  -Wl,--start-group $RU $LIB/libexecutorch_core.a $LIB/libprim_ops_impl.a $LIB/libcortex_m_kernels.a \
    $LIB/libquantized_kernels.a $LIB/libportable_kernels.a $LIB/libkernels_util.a $LIB/libcmsis-nn.a \
  -Wl,--end-group -Wl,--no-warn-rwx-segments 2>&1 | tee $B/link.log
arm-none-eabi-size -A $B/image.elf > $B/size_A.txt
arm-none-eabi-size $B/image.elf | tee $B/size.txt

# 5. Per-input breakdown from the map, and etscope's prediction next to it.
/tmp/etscope-try fit $PTE --part $PART --json > $B/etscope_fit.json
python3 $ROOT/src/breakdown.py $B/image.map $B/image.elf $B/etscope_fit.json > $B/breakdown.json
python3 -c "import json;d=json.load(open('$B/breakdown.json'));print(json.dumps(d['compare'],indent=1))"
