/* Just enough ELF to know that a module's bytes are one whole
 * relocatable object and nothing else. */
#ifndef RS_MODULE_ELF_H
#define RS_MODULE_ELF_H

#include <stdbool.h>
#include <stdint.h>

#include "base/error.h"
#include "base/file.h"

bool module_elf_magic(const uint8_t *head, size_t n);

/* Checks that [0, len) of in is an ELF relocatable object whose
 * sections and section header table end exactly at len: anything after
 * them would be the remains of a damaged signature, which must not be
 * signed over. */
int module_elf_check(const rs_input *in, uint64_t len, rs_error *err);

#endif
