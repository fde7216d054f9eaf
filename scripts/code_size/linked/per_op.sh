#!/bin/bash
# Per-operator linked code size of ExecuTorch bare-metal selective-build images.
#   per_op.sh            # baseline (every build in $CPUS) + every op in perop/ops.txt (xargs -P2) + aggregate
#   per_op.sh base       # only common objects + baselines
#   per_op.sh one OP FAMILY   # one op, every build in $CPUS
# Same objects, flags, libraries and link line as link_image.sh (MAIN=runner). Baseline = that image
# with an EMPTY operator selection (codegen run with an empty selected_operators.yaml for all three
# families) and an empty embedded .pte. Per op: codegen with a selected_operators.yaml holding only
# that op (gen_oplist --root_ops=OP), only that family's registration object replaced.
set -euo pipefail
ROOT=/tmp/linkimg; CS=/tmp/codesize; ET=$CS/src/executorch; PY=/tmp/etvenv/bin/python; P=$ROOT/perop
COMMON="-mthumb -ffunction-sections -fdata-sections -fno-exceptions -fno-rtti -fno-unwind-tables -std=c++17 -DNDEBUG -Wno-psabi -Wno-deprecated-declarations -DC10_USING_CUSTOM_GENERATED_MACROS -DET_MIN_LOG_LEVEL=Info -DET_ENABLE_PROGRAM_VERIFICATION=0 -DET_ENABLE_DEPRECATED_CONSTANT_BUFFER=0 -DFLATBUFFERS_MAX_ALIGNMENT=1024"
INC="-I$CS/work/inc -I$CS/work/gen -I$ET/runtime/core/portable_type/c10 -I$CS/src/flatbuffers/include -I$ROOT/cmsis-nn/Include"
TG=$($PY -c "import torchgen,os;print(os.path.dirname(torchgen.__file__))")
cpuflags() { case $1 in
  m55) echo "-mcpu=cortex-m55 -mfloat-abi=hard";;
  m4)  echo "-mcpu=cortex-m4 -mfloat-abi=hard -mfpu=fpv4-sp-d16";;
  m0p) echo "-mcpu=cortex-m0plus -mfloat-abi=soft";; esac; }
# The builds to link: CPUS="m0p" per_op.sh links only the plain-C build (the others' results stay).
CPUS=${CPUS:-m55 m4 m0p}

# codegen DIR FAMILY OP|""  -> DIR/selected_operators.yaml, DIR/RegisterCodegenUnboxedKernelsEverything.cpp
codegen() {
  local D=$1 fam=$2 op=$3 Y
  mkdir -p $D
  ( cd $ROOT/et
    if [ -n "$op" ]; then $PY -m codegen.tools.gen_oplist --output_path=$D/selected_operators.yaml --root_ops="$op" >$D/oplist.log 2>&1
    else $PY -m codegen.tools.gen_oplist --output_path=$D/selected_operators.yaml >$D/oplist.log 2>&1; fi
    case $fam in
      portable) Y="--functions-yaml-path=$ET/kernels/portable/functions.yaml"
                # allclose.* live in portable/custom_ops.yaml, not functions.yaml
                case "$op" in aten::allclose*) Y="$Y --custom-ops-yaml-path=$ET/kernels/portable/custom_ops.yaml";; esac;;
      quantized) Y="--custom-ops-yaml-path=$ET/kernels/quantized/quantized.yaml";;
      cortex_m) Y="--custom-ops-yaml-path=$ET/backends/cortex_m/ops/operators.yaml";;
    esac
    $PY -m codegen.gen --source-path=$ROOT/et/codegen --install-dir=$D \
      --tags-path=$TG/packaged/ATen/native/tags.yaml \
      --aten-yaml-path=$TG/packaged/ATen/native/native_functions.yaml \
      --op-selection-yaml-path=$D/selected_operators.yaml $Y >$D/codegen.log 2>&1 )
}

# link CPU OUTDIR REG_PORTABLE REG_QUANTIZED REG_CORTEX_M
dolink() {
  local CPU=$1 B=$2 C=$P/common/$1 LIB=$ROOT/lib/$1
  mkdir -p $B
  arm-none-eabi-g++ $(cpuflags $CPU) -mthumb -Wl,--gc-sections --specs=nano.specs --specs=nosys.specs \
    -T $ROOT/src/image.ld -Wl,-Map=$B/image.map -o $B/image.elf \
    $C/startup.o $C/main.o $C/pte_empty.o $3 $4 $5 $C/reg_prim_ops.o \
    -Wl,--start-group $C/libextension_runner_util.a $LIB/libexecutorch_core.a $LIB/libprim_ops_impl.a $LIB/libcortex_m_kernels.a \
      $LIB/libquantized_kernels.a $LIB/libportable_kernels.a $LIB/libkernels_util.a $LIB/libcmsis-nn.a \
    -Wl,--end-group -Wl,--no-warn-rwx-segments >$B/link.log 2>&1 || { echo "LINK FAILED" >>$B/link.log; return 1; }
  arm-none-eabi-size $B/image.elf > $B/size.txt
  python3 $ROOT/src/perop_members.py $B/image.map $B/image.elf > $B/members.json
  [ -n "${KEEP:-}" ] || rm -f $B/image.map $B/image.elf
}

base() {
  codegen $P/gen/_empty_portable portable ""
  codegen $P/gen/_empty_quantized quantized ""
  codegen $P/gen/_empty_cortex_m cortex_m ""
  ( cd $ROOT/et && $PY -m codegen.tools.gen_selected_prim_ops --op-selection-yaml-path=$P/gen/_empty_portable/selected_operators.yaml --output-dir=$P/gen/_empty_portable >>$P/gen/_empty_portable/oplist.log 2>&1 )
  : > $P/empty.pte
  for CPU in $CPUS; do
    local C=$P/common/$CPU CXX="arm-none-eabi-g++ $(cpuflags $CPU) $COMMON $INC"
    mkdir -p $C
    for fam in portable quantized cortex_m; do
      $CXX -O3 -I$P/gen/_empty_$fam -c $P/gen/_empty_$fam/RegisterCodegenUnboxedKernelsEverything.cpp -o $C/reg_${fam}_empty.o
    done
    $CXX -Oz -DET_PRIM_OPS_SELECTIVE_BUILD -DEXECUTORCH_ENABLE_PRIM_OPS_SELECTIVE_BUILD \
      -I$ET/kernels/prim_ops -I$P/gen/_empty_portable -c $ET/kernels/prim_ops/register_prim_ops.cpp -o $C/reg_prim_ops.o
    $CXX -Oz -DRUNNER_LIKE -c $ROOT/src/main.cpp -o $C/main.o
    for f in inputs inputs_portable; do $CXX -Oz -c $ET/extension/runner_util/$f.cpp -o $C/runner_util_$f.o; done
    rm -f $C/libextension_runner_util.a
    arm-none-eabi-ar rcs $C/libextension_runner_util.a $C/runner_util_inputs.o $C/runner_util_inputs_portable.o
    arm-none-eabi-gcc $(cpuflags $CPU) -mthumb -Os -ffunction-sections -fdata-sections -c $ROOT/src/startup.c -o $C/startup.o
    arm-none-eabi-gcc $(cpuflags $CPU) -mthumb -DPTE_FILE="\"$P/empty.pte\"" -c $ROOT/src/pte.S -o $C/pte_empty.o
    KEEP=1 dolink $CPU $P/link/$CPU/_baseline $C/reg_portable_empty.o $C/reg_quantized_empty.o $C/reg_cortex_m_empty.o
    cat $P/link/$CPU/_baseline/size.txt
  done
}

one() {
  local op=$1 fam=$2 safe=$(echo "$1" | tr ':.' '__') t0=$(date +%s.%N)
  local D=$P/gen/$safe
  rm -rf $D; codegen $D $fam "$op" || { echo "CODEGEN FAILED" > $D/FAILED; }
  for CPU in $CPUS; do
    local C=$P/common/$CPU B=$P/link/$CPU/$safe CXX="arm-none-eabi-g++ $(cpuflags $CPU) $COMMON $INC"
    rm -rf $B; mkdir -p $B; echo "$op" > $B/op.txt; echo "$fam" > $B/family.txt
    if [ -f $D/FAILED ]; then cp $D/codegen.log $B/fail.log; echo "codegen failed" > $B/FAILED; continue; fi
    if ! grep -q "Kernel(" $D/RegisterCodegenUnboxedKernelsEverything.cpp; then
      echo "codegen emitted no kernel for $op in family $fam" > $B/FAILED; continue; fi
    if ! $CXX -O3 -I$D -c $D/RegisterCodegenUnboxedKernelsEverything.cpp -o $B/reg_$fam.o >$B/compile.log 2>&1; then
      echo "registration compile failed" > $B/FAILED; continue; fi
    local RP=$C/reg_portable_empty.o RQ=$C/reg_quantized_empty.o RC=$C/reg_cortex_m_empty.o
    case $fam in portable) RP=$B/reg_$fam.o;; quantized) RQ=$B/reg_$fam.o;; cortex_m) RC=$B/reg_$fam.o;; esac
    dolink $CPU $B $RP $RQ $RC || echo "link failed" > $B/FAILED
  done
  printf "%s %s %.1fs\n" "$op" "$fam" $(echo "$(date +%s.%N) - $t0" | bc)
}

case ${1:-all} in
  base) base;;
  one) one "$2" "$3";;
  all)
    base
    export -f one codegen dolink cpuflags; export ROOT CS ET PY P COMMON INC TG CPUS
    awk '{print $1, $2}' $P/ops.txt | xargs -P2 -L1 bash -c 'one "$0" "$1"' 2>&1 | tee $P/run.log
    python3 $ROOT/src/perop_aggregate.py;;
esac
