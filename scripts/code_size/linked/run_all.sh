#!/bin/bash
# All four programs, runner-like main (default) and minimal main.
set -e
cd /tmp/linkimg
for M in runner minimal; do
  sfx=$([ $M = minimal ] && echo _min || true)
  MAIN=$M ./link_image.sh /work/main/tests/fixtures/tiny_conv_relu_linear/model_int8_cortex_m4_default.pte m4 tiny_m4$sfx
  MAIN=$M ./link_image.sh /work/main/tests/fixtures/tiny_conv_relu_linear/model_int8_cortex_m55.pte m55 tiny_m55$sfx
  MAIN=$M ./link_image.sh /work/shared/reference/ds_cnn_kws/model_int8_cortex_m55_default.pte m55 ds_cnn_m55$sfx
  MAIN=$M ./link_image.sh /work/shared/reference/mobilenet_v1_025_vww/model_int8_cortex_m4_default.pte m4 mbnet_m4$sfx
done
