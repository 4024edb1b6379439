/*
 * SQLite for Swift. SQLITE_TRANSIENT is a macro casting -1 to a function pointer, which Swift
 * does not import: it is re-exported here as a typed constant.
 */
#ifndef APPSHELL_CSQLITE_SHIM_H
#define APPSHELL_CSQLITE_SHIM_H

#include <sqlite3.h>

/** Tells sqlite3_bind_* to copy the bytes before the call returns. */
static const sqlite3_destructor_type appshell_sqlite_transient = SQLITE_TRANSIENT;

#endif
