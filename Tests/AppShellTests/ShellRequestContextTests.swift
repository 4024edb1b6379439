import AppShell
import AppShellHTTP
import AppShellJSON
import AppShellSessions
import AppShellTesting
import Foundation
import Testing

/// The probe app's one screen: `touch` changes the version, `rotate` gives the session a new id.
enum ContextProbeAction: String, ScreenActions {
    case touch, rotate
}

final class ContextProbeScreen: Screen<ContextProbeAction>, RestorableScreen {
    init() { super.init(name: "probe") }
    override func renderHTML() -> String { form(.touch, label: "Touch") }
}

/// The probe app's coordinator: the screen's actions, and nothing to start or launch.
final class ContextProbeCoordinator: Coordinator, ApplicationCoordinator {
    let root: RootController
    override class var shows: [any Restorable.Type] { [ContextProbeScreen.self] }

    init(root: RootController) {
        self.root = root
        super.init(name: "probe")
        handle(ContextProbeAction.self) { [unowned self] action, _ in
            if action == .rotate { self.root.rotateSessionID() }
            self.root.noteChange()
        }
    }
}

/// The paths the probe app was asked to remember (`rememberTarget`).
final class RememberedTargets: @unchecked Sendable {
    private let lock = NSLock()
    private var paths: [String] = []
    func add(_ path: String) { lock.withLock { paths.append(path) } }
    var all: [String] { lock.withLock { paths } }
}

/// An app of one screen at `/`, to see what the shell gives its handlers.
struct ContextProbeApp: ShellApplication {
    let remembered = RememberedTargets()
    func makeFirstScreen() -> ViewController { ContextProbeScreen() }
    func makeCoordinator(root: RootController) -> ContextProbeCoordinator { ContextProbeCoordinator(root: root) }
    func url(of app: LiveApp) -> String { "/" }
    func open(path: String, next: String?, in app: LiveApp) -> PageRoute { path == "/" ? .show : .notFound }
    func rememberTarget(_ path: String, in app: LiveApp) { remembered.add(path) }
}

/// `ShellRequestContext` and the narrower contexts of the routes that change the session: the
/// shell's verdicts on the client (what the handler may do, the same-site `next`, Origin, the
/// form's token) are made by the context, and a route that acts never runs when they refuse.
@Suite struct ShellRequestContextTests {
    struct Fixture {
        let server: TestServer
        let app: ContextProbeApp
    }

    /// The shell's routes, and `/probe`, whose handler answers with its context's verdicts in
    /// header fields (a HEAD has no body).
    static func start(_ mode: TestMode) throws -> Fixture {
        let app = ContextProbeApp()
        let registry = SessionRegistry(configuration: SessionConfiguration(), backend: MemoryDefaultsBackend())
        let shell = Shell(
            application: app, registry: registry, cookie: SessionCookie(baseName: "probe_session", secure: false),
            chrome: PageChrome(name: "Probe"))
        var router = Router()
        shell.install(into: &router, pagePaths: [])
        router.get(
            "/probe",
            shell.respond { context in
                var response = Response.text("probe")
                let access: String
                switch context.access {
                case .full: access = "full"
                case .readOnly: access = "readOnly"
                case .retired: access = "retired"
                }
                response.headers.add(name: "X-Access", value: access)
                response.headers.add(name: "X-Next", value: context.next ?? "-")
                response.headers.add(name: "X-Screen", value: context.app.root.visibleScreen.name)
                return response
            })
        return Fixture(server: try TestServer(mode, responder: router), app: app)
    }

    static func version(_ client: any HTTPTestClient) throws -> Int? {
        try client.get("/api/state").json["version"]?.integerValue
    }

    static func token(_ client: any HTTPTestClient) throws -> String {
        let page = try client.get("/").text
        let marker = "name=\"csrf\" value=\""
        let start = try #require(page.range(of: marker)).upperBound
        return String(page[start...].prefix { $0 != "\"" })
    }

    @Test(arguments: TestMode.allCases) func theContextSaysWhatTheHandlerMayDo(mode: TestMode) throws {
        let client = try Self.start(mode).server.client()
        let plain = try client.get("/probe")
        #expect(plain.headers["X-Access"] == "full")
        #expect(plain.headers["X-Screen"] == "probe")
        #expect(
            try client.get("/probe", headers: [("Sec-Purpose", "prefetch;prerender")]).headers["X-Access"] == "readOnly"
        )
        #expect(try client.get("/probe", headers: [("Purpose", "prefetch")]).headers["X-Access"] == "readOnly")
        #expect(try client.send("HEAD", "/probe", headers: [], body: []).headers["X-Access"] == "readOnly")
    }

    @Test(arguments: TestMode.allCases) func theContextGivesOnlyASameSiteNext(mode: TestMode) throws {
        let client = try Self.start(mode).server.client()
        #expect(try client.get("/probe?next=/list").headers["X-Next"] == "/list")
        for foreign in ["//evil.example", "https://evil.example/", "/\\evil.example", "evil"] {
            let encoded = foreign.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
            #expect(try client.get("/probe?next=" + encoded).headers["X-Next"] == "-", "next=\(foreign)")
        }
    }

    /// In process: a live stream of a session that holds something stays open.
    @Test func anEventStreamRemembersOnlyASameSiteNextOfARequestThatMayChange() throws {
        let fixture = try Self.start(.inProcess)
        let client = fixture.server.client()
        // A session that holds something, so that its stream is subscribed (and the first read made it).
        #expect(try client.postJSON("/api/actions", #"{"action": "touch"}"#).status == 200)
        _ = try client.get("/api/events?next=%2F%2Fevil.example")
        _ = try client.get("/api/events?next=%2Fkept", headers: [("Sec-Purpose", "prefetch")])
        _ = try client.get("/api/events?next=%2Fkept")
        #expect(fixture.app.remembered.all == ["/kept"])
    }

    @Test(arguments: TestMode.allCases) func anActionFromAnotherSiteIsRefusedBeforeItRuns(mode: TestMode) throws {
        let client = try Self.start(mode).server.client()
        #expect(try client.postJSON("/api/actions", #"{"action": "touch"}"#).status == 200)
        let before = try Self.version(client)
        let refused = try client.postJSON(
            "/api/actions", #"{"action": "touch"}"#, headers: [("Origin", "http://evil.example")])
        #expect(refused.status == 403)
        #expect(refused.json["error"]?.stringValue == "requests from http://evil.example are not accepted")
        #expect(try Self.version(client) == before)
        #expect(try client.postJSON("/api/actions", #"{"action": "touch"}"#).status == 200)
        #expect(try Self.version(client) == before.map { $0 + 1 })
    }

    @Test(arguments: TestMode.allCases) func aFormNeedsTheTokenThisSiteAndAnAction(mode: TestMode) throws {
        let client = try Self.start(mode).server.client()
        #expect(try client.postJSON("/api/actions", #"{"action": "touch"}"#).status == 200)
        let token = try Self.token(client)
        let before = try Self.version(client)
        #expect(try client.postForm("/actions", "action=touch").status == 403)
        #expect(try client.postForm("/actions", "csrf=wrong&action=touch").status == 403)
        #expect(
            try client.postForm("/actions", "csrf=\(token)&action=touch", headers: [("Origin", "http://evil.example")])
                .status == 403)
        #expect(try client.postForm("/actions", "csrf=\(token)").status == 400)
        #expect(try Self.version(client) == before)
        let done = try client.postForm("/actions", "csrf=\(token)&action=touch")
        #expect(done.status == 303)
        #expect(done.headers["Location"] == "/")
        #expect(try Self.version(client) == before.map { $0 + 1 })
    }

    @Test(arguments: TestMode.allCases) func aRetiredIDMayDoNothing(mode: TestMode) throws {
        let client = try Self.start(mode).server.client()
        #expect(try client.postJSON("/api/actions", #"{"action": "touch"}"#).status == 200)
        let token = try Self.token(client)
        let retired = try #require(client.cookies["probe_session"])
        #expect(try client.postJSON("/api/actions", #"{"action": "rotate"}"#).status == 200)
        let current = try #require(client.cookies["probe_session"])
        #expect(current != retired)
        let after = try Self.version(client)

        client.cookies["probe_session"] = retired
        #expect(try client.get("/probe").headers["X-Access"] == "retired")
        let action = try client.postJSON("/api/actions", #"{"action": "touch"}"#)
        #expect(action.status == 409)
        #expect(action.headers["Set-Cookie"] == nil)
        // Its form carries a valid token (for the retired id): it leads to `/` and does nothing.
        let form = try client.postForm("/actions", "csrf=\(token)&action=touch")
        #expect(form.status == 303)
        #expect(form.headers["Location"] == "/")
        // Its event stream ends at once, with no state (a live one would never hear anything).
        let stream = try client.get("/api/events")
        #expect(stream.status == 200)
        #expect(!stream.text.contains("event: state"))

        client.cookies["probe_session"] = current
        #expect(try Self.version(client) == after)
    }
}
