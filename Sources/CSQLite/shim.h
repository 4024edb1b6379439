/*
 * SQLite for Swift. SQLITE_TRANSIENT and SQLITE_STATIC are macros casting -1 and 0 to a function
 * pointer, which Swift does not import: they are re-exported here as typed constants.
 */
#ifndef APPSHELL_CSQLITE_SHIM_H
#define APPSHELL_CSQLITE_SHIM_H

#include <sqlite3.h>

/** Tells sqlite3_bind_* to copy the bytes before the call returns. */
static const sqlite3_destructor_type appshell_sqlite_transient = SQLITE_TRANSIENT;

/** Tells sqlite3_bind_* to use the caller's bytes as they are: they must stay valid and unchanged
 *  until the statement is reset or another value is bound to that parameter. */
static const sqlite3_destructor_type appshell_sqlite_static = SQLITE_STATIC;

/**
 * Turns off SQLite's count of the memory it has allocated (SQLITE_CONFIG_MEMSTATUS), which makes
 * every allocation and free take one process-wide mutex. sqlite3_config is variadic, which Swift
 * does not call. Only before SQLite initializes (the process's first open): SQLITE_MISUSE after.
 */
static inline int appshell_sqlite_count_no_memory(void) {
    return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
}

#endif
