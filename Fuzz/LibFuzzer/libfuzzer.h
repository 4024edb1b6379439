// libFuzzer's driver, for fuzz targets that bring their own main (Fuzz/Targets/FuzzDriver.swift):
// the toolchain's libclang_rt.fuzzer_no_main, which the Makefile links into the fuzz executables
// only (Package.swift), defines it.
#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*UserCb)(const uint8_t *Data, size_t Size));
