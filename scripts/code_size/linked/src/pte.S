/* The .pte, embedded byte for byte (PTE_FILE is passed with -D). */
    .section .rodata.model_pte, "a", %progbits
    .balign 16
    .global model_pte
    .global model_pte_end
model_pte:
    .incbin PTE_FILE
model_pte_end:
