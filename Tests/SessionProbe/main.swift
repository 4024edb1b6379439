// A small server for the session tests: the session registry over a real SQLite file behind a
// real HTTP server, in its own process so that the tests can stop it with SIGTERM or SIGKILL and
// start it again on the same file. It is not part of AppShell's product.
//
// usage: SessionProbe STORE_PATH [COOKIE_NAME]
//   GET  /defaults  → the session's stored values as JSON
//   POST /defaults  → sets each member of the JSON object body (null removes)
//   POST /rotate    → rotates the session id
import AppShell
import AppShellHTTP
import AppShellJSON
import AppShellSessions
import Foundation

TerminationSignal.block()
let arguments = CommandLine.arguments
guard arguments.count >= 2 else {
    Logger.appshell.error("usage: SessionProbe STORE_PATH [COOKIE_NAME]")
    exit(2)
}
let backend: SQLiteDefaultsBackend
do {
    backend = try SQLiteDefaultsBackend(path: arguments[1])
} catch {
    Logger.appshell.error("cannot start: \(error)")
    exit(1)
}
let registry = SessionRegistry(configuration: SessionConfiguration(), backend: backend)
let cookie = SessionCookie(baseName: arguments.count > 2 ? arguments[2] : "appshell_session", secure: false)

/// The session's stored values as the JSON answer.
@Sendable func stored(_ session: SessionContext) -> Response {
    .json(.object(session.defaults.storedValues.mapValues(\.json)))
}

var router = Router()
router.get("/defaults", SessionResponder(registry: registry, cookie: cookie) { _, session in stored(session) })
router.post(
    "/defaults",
    SessionResponder(registry: registry, cookie: cookie) { request, session in
        guard let members = try request.decodeJSON().objectValue else { throw HTTPError.badRequest("need an object") }
        for (key, value) in members {
            if value == .null {
                session.defaults.removeObject(forKey: key)
            } else if let converted = DefaultsValue(json: value) {
                session.defaults.set(converted, forKey: key)
            }
        }
        return stored(session)
    })
router.post(
    "/rotate",
    SessionResponder(registry: registry, cookie: cookie) { _, session in
        session.rotateID()
        return stored(session)
    })

var configuration = HTTPServerConfiguration()
configuration.port = 0
configuration.accessLog = false
let server = HTTPServer(configuration: configuration, responder: router)
do {
    try server.start()
} catch {
    Logger.appshell.error("cannot start: \(error)")
    exit(1)
}
AccessLog.event("listening", ["port": .integer(server.port)])
_ = TerminationSignal.wait()
server.shutdown()
exit(0)
