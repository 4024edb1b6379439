// One `import AppShell` gives an app everything it uses: the HTTP layer's requests, responses
// and routes, the JSON value, the session's defaults store, the password hashes and the worker
// pools (issue "Screens written the way iOS engineers write them today", point 9: an app imported
// six modules, and `cannot find 'HTML' in scope` gave no hint which). The modules stay separate
// below (each imports only those below it, the Architecture article); this re-exports them, with the
// underscored `@_exported`, as Vapor re-exports SwiftNIO.
@_exported import AppShellAuth
@_exported import AppShellConcurrency
@_exported import AppShellHTTP
@_exported import AppShellJSON
@_exported import AppShellSessions
