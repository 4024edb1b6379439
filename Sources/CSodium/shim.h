/*
 * libsodium for Swift, imported by AppShellAuth (password hashes, form tokens) and
 * AppShellSessions (the hash stores key sessions by, SessionStoreKey).
 *
 * No constants are re-exported here on purpose: the pwhash macros Swift cannot import (the
 * ones defined through other macros, like crypto_pwhash_ALG_ARGON2ID13 or the INTERACTIVE
 * limits) each have a function twin in libsodium (crypto_pwhash_alg_argon2id13(),
 * crypto_pwhash_opslimit_interactive(), ...), which also reports the values of the library
 * actually loaded at run time rather than of the header compiled against. Any shim that
 * becomes necessary goes here, prefixed appshell_sodium_.
 */
#ifndef APPSHELL_CSODIUM_SHIM_H
#define APPSHELL_CSODIUM_SHIM_H

#include <malloc.h>
#include <sodium.h>

/* glibc's mallopt for PasswordHash.reserveHeapHeadroom (Glibc's Swift module leaves malloc.h out):
 * each heap grows `top_pad` bytes beyond what it needs, and blocks below `mmap_threshold` bytes
 * come from the heaps. Returns 1 when glibc took both. */
static inline int appshell_sodium_reserve_heap_headroom(int top_pad, int mmap_threshold) {
    return mallopt(M_TOP_PAD, top_pad) == 1 && mallopt(M_MMAP_THRESHOLD, mmap_threshold) == 1;
}

/* The bytes glibc's malloc holds in blocks mapped one by one (mallinfo2's hblkhd), for the tests
 * of PasswordHash.reserveHeapHeadroom. */
static inline size_t appshell_sodium_malloc_mapped_bytes(void) {
    return mallinfo2().hblkhd;
}

#endif
