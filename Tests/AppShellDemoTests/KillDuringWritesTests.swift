import AppShellConcurrency
import AppShellJSON
import AppShellTesting
import Foundation
import Testing

@testable import AppShellSessions

/// Issue 15's first fault (and issue 14's durability check of group commit): the real `appshell`
/// process over SQLite, a stream of 1 000 logins and flag writes from many sessions at once,
/// killed with SIGKILL at random moments, several times. After each restart every write whose
/// response was received is there (a response means committed), and the file passes
/// `PRAGMA quick_check`.
@Suite(.serialized) struct KillDuringWritesTests {
    /// A cheap Argon2id hash of "appshell" (m=8 KiB, t=1): a thousand logins cost milliseconds,
    /// and the writes, not the checks, are what is tested.
    static let cheapHash =
        "$argon2id$v=19$m=8,t=1,p=1$epeFP5SIZg6DvhjnT/4k9A$7ysM5wXeXBxXi68zANLP5WxPhq2CDJ6vBNcMWm4c9HQ"
    /// Clients at once, each logging in as its own user (the login throttle counts a login being
    /// checked against its username and client until it succeeds).
    static let clientCount = 8

    /// One client's session as the client knows it: its cookie and the state of its last answer.
    final class Client: @unchecked Sendable {
        var cookies: [String: String] = [:]
        /// The version, screen and defaults of the last state answered (`nil`: none yet).
        var version: Int?
        var screen: String?
        var defaults: JSON?
        /// The request sent and not answered when the server died (at most one).
        var outstanding: String?
        var step = 0
        /// Which user it logs in as.
        let number: Int

        init(number: Int) { self.number = number }

        func adopt(_ state: JSON) {
            version = state["version"]?.integerValue
            screen = state["screen"]?.stringValue
            defaults = state["defaults"]
        }
    }

    /// The next request of a client's stream: logins and flag writes (`isLogin` by login and
    /// logout, `viewType` by a launch from a notification), round and round.
    static func next(_ client: Client) -> (name: String, body: String)? {
        guard client.version != nil else { return nil }
        switch client.screen {
        case "login":
            return ("login", #"{"action": "login", "username": "user\#(client.number)", "password": "appshell"}"#)
        case "main":
            return client.step % 2 == 0
                ? ("launch", #"{"action": "launch", "source": "notification"}"#)
                : ("logout", #"{"action": "logout"}"#)
        default: return ("pop", #"{"action": "pop"}"#)
        }
    }

    @Test func everyAnsweredWriteSurvivesKill9() throws {
        let directory = NSTemporaryDirectory() + "appshell-kill-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = directory + "/sessions.sqlite"
        let configPath = directory + "/config.json"
        let users = (0..<Self.clientCount).map { #"{"username": "user\#($0)", "passwordHash": "\#(Self.cheapHash)"}"# }
        try #"{"users": [\#(users.joined(separator: ", "))]}"#.write(
            toFile: configPath, atomically: true, encoding: .utf8)
        let environment = [
            "APPSHELL_PORT": "0", "APPSHELL_ACCESS_LOG": "false", "APPSHELL_SPLASH_DELAY_MILLISECONDS": "0",
            "APPSHELL_STORE": "sqlite", "APPSHELL_STORE_PATH": store,
            // A thousand logins from one client: the per-client limits would refuse most of them.
            "APPSHELL_LOGIN_ATTEMPTS_PER_NETWORK": "0", "APPSHELL_NEW_SESSIONS_PER_MINUTE": "0",
        ]
        let clients = (0..<Self.clientCount).map { Client(number: $0) }
        let answered = Locked(0)
        var kills = 0
        var checked = 0
        var rounds = 0
        while answered.withLock({ $0 }) < 1000 || kills < 3 {
            rounds += 1
            let running = try CommandTests.run(["--config", configPath], environment: environment)
            let port = try running.port()
            // After a restart: every answered write is there.
            if rounds > 1 { checked += try verify(clients, port: port) }
            // A random moment: after 60 to 300 more logins and flag writes, mid-stream.
            let killAt = answered.withLock { $0 } + Int.random(in: 60...300)
            let stop = Locked(false)
            let group = DispatchGroup()
            for client in clients {
                group.enter()
                Thread.detachNewThread {
                    defer { group.leave() }
                    Self.stream(client, port: port, stop: stop, answered: answered)
                }
            }
            while answered.withLock({ $0 }) < killAt && !stop.withLock({ $0 }) { usleep(1000) }
            running.kill()
            _ = running.waitForExit()
            stop.withLock { $0 = true }
            group.wait()
            kills += 1
            // The file is sound after each kill (checked with the server dead, before the restart).
            let connection = try SQLiteConnection(path: store)
            let check = try connection.query("PRAGMA quick_check") { $0.string(at: 0) }
            #expect(check == ["ok"], "after kill \(kills): \(check)")
        }
        // The last round's writes too.
        let running = try CommandTests.run(["--config", configPath], environment: environment)
        checked += try verify(clients, port: try running.port())
        running.terminate()
        #expect(running.waitForExit() == 0)
        print(
            "kill -9 test: \(answered.withLock { $0 }) logins and flag writes answered, \(kills) kills, "
                + "\(checked) sessions checked")
        #expect(kills >= 3)
        #expect(answered.withLock { $0 } >= 1000)
        #expect(checked >= clients.count * kills / 2, "too few sessions could be checked: \(checked)")
    }

    /// Sends the client's stream until `stop` or the server dies; counts the answers.
    static func stream(_ client: Client, port: Int, stop: Locked<Bool>, answered: Locked<Int>) {
        let http = TestClient(port: port)
        http.cookies = client.cookies
        while !stop.withLock({ $0 }) {
            let request = next(client)
            client.outstanding = request?.name ?? "state"
            guard
                let response = try?
                    (request.map { try http.postJSON("/api/actions", $0.body) } ?? http.get("/api/state"))
            else { return }
            client.outstanding = nil
            client.cookies = http.cookies
            // Every answer carries the state it committed (a refusal too).
            if response.json["version"] != nil { client.adopt(response.json) }
            guard response.status == 200 else {
                Issue.record("\(request?.name ?? "state") answered \(response.status): \(response.text.prefix(200))")
                return
            }
            client.step += 1
            // The stream's count: logins and flag writes (the pops back from the list, and the
            // first state of a session, come between them uncounted).
            if ["login", "launch", "logout"].contains(request?.name) { answered.withLock { $0 += 1 } }
        }
    }

    /// Checks each client's session against its last answer; returns how many were checked.
    func verify(_ clients: [Client], port: Int) throws -> Int {
        var checked = 0
        for client in clients where client.version != nil {
            let http = TestClient(port: port)
            http.cookies = client.cookies
            let state = try http.get("/api/state")
            #expect(state.status == 200)
            let rotating = client.outstanding == "login" || client.outstanding == "logout"
            if state.headers["Set-Cookie"] != nil {
                // The id names nothing: only an unanswered login or logout may have moved it (its
                // answer, with the new id, was lost with the process).
                #expect(
                    rotating,
                    "an answered session was lost: last answer \(client.screen ?? "?") v\(client.version ?? -1), outstanding \(client.outstanding ?? "none")"
                )
            } else {
                let json = state.json
                let version = json["version"]?.integerValue ?? -1
                let acknowledged = client.version ?? 0
                if client.outstanding == nil || version == acknowledged {
                    #expect(version == acknowledged, "version \(version), answered \(acknowledged)")
                    #expect(json["defaults"] == client.defaults, "defaults differ from the last answer")
                    #expect(json["screen"]?.stringValue == client.screen)
                } else {
                    // The unanswered request was committed: one step beyond, never behind.
                    #expect(version > acknowledged, "version \(version) behind the answered \(acknowledged)")
                }
                checked += 1
            }
            client.cookies = http.cookies
            client.adopt(state.json)
            client.outstanding = nil
        }
        return checked
    }
}
