import AppShell
import AppShellDemo
import AppShellJSON
import AppShellTesting
import Foundation
import Testing

/// The framework's sign-up, on the demo: off by default; on, its rules, a taken name, the
/// network's hourly cap, a new account that logs in, and the screen after a restart.
@Suite struct SignUpTests {
    static func signUp(
        _ client: TestClient, _ username: String, _ password: String, from address: String? = nil
    ) throws -> TestResponse {
        try client.postJSON(
            "/api/actions",
            JSON.object(["action": "signUp", "username": .string(username), "password": .string(password)])
                .serializedString,
            headers: address.map { [("X-Forwarded-For", $0)] } ?? [])
    }

    static func act(_ client: TestClient, _ action: String, from address: String? = nil) throws -> TestResponse {
        try client.postJSON(
            "/api/actions", "{\"action\": \"\(action)\"}", headers: address.map { [("X-Forwarded-For", $0)] } ?? [])
    }

    /// A visitor at the sign-up screen.
    static func atSignUp(_ live: LiveServer, from address: String? = nil) throws -> TestClient {
        let client = try LoginLimitTests.visitor(live, from: address)
        let shown = try act(client, "createAccount", from: address)
        #expect(shown.status == 200)
        #expect(shown.json["screen"] == "signup")
        return client
    }

    @Test func signUpIsOffByDefault() throws {
        let (_, live) = try AllowedHostsTests.start()
        let client = try LoginLimitTests.visitor(live)
        let page = try client.get("/login")
        #expect(!page.text.contains("Create an account"))
        let refused = try Self.act(client, "createAccount")
        #expect(refused.status == 403)
        #expect(refused.json["error"]?.stringValue?.contains("does not let visitors make accounts") == true)
        #expect(refused.json["screen"] == "login")
        let notOffered = try Self.signUp(client, "alice", "a long passphrase")
        #expect(notOffered.status == 409)
        #expect(notOffered.json["screen"] == "login")
    }

    @Test func aNewAccountIsLoggedInAndCanLogInAgain() throws {
        let (app, live) = try AllowedHostsTests.start { $0.accounts.signUp = true }
        let visitor = try LoginLimitTests.visitor(live)
        #expect(try visitor.get("/login").text.contains("Create an account"))
        let client = try Self.atSignUp(live)
        let made = try Self.signUp(client, "Alice.B", "a long passphrase")
        #expect(made.status == 200)
        #expect(made.json["screen"] == "main")
        #expect(made.json["defaults"]?["username"] == "alice.b")
        #expect(made.headers["Set-Cookie"] != nil)
        #expect(try app.server.accounts.names().contains("alice.b"))
        // Another browser logs in with it, in any case.
        let other = try LoginLimitTests.visitor(live)
        let login = try other.postJSON(
            "/api/actions", #"{"action": "login", "username": "ALICE.B", "password": "a long passphrase"}"#)
        #expect(login.status == 200)
        #expect(login.json["screen"] == "main")
    }

    @Test func theRulesAndATakenNameSayWhatIsWrong() throws {
        let (_, live) = try AllowedHostsTests.start { $0.accounts.signUp = true }
        let client = try Self.atSignUp(live)
        let cases: [(String, String, String)] = [
            ("", "a long passphrase", "A user name must not be empty."),
            ("-alice", "a long passphrase", "A user name begins with a letter or a digit."),
            (
                "ali ce", "a long passphrase",
                "A user name has only the letters a-z, digits, '.', '_' and '-', not U+20."
            ),
            (String(repeating: "a", count: 65), "a long passphrase", "A user name has at most 64 characters."),
            ("alice", "short", "A password has at least 8 characters."),
        ]
        for (username, password, message) in cases {
            let refused = try Self.signUp(client, username, password)
            #expect(refused.status == 422, "\(username)")
            #expect(refused.json["error"]?.stringValue == message)
            #expect(refused.json["screen"] == "signup")
        }
        // The page shows the same words.
        #expect(try client.get("/").text.contains("A password has at least 8 characters."))
        let taken = try Self.signUp(client, "Demo", "a long passphrase")
        #expect(taken.status == 409)
        #expect(taken.json["error"] == "The username demo is taken. Choose another.")
        #expect(taken.json["defaults"]?["isLogin"] == nil)
        // Back to login.
        #expect(try Self.act(client, "logIn").json["screen"] == "login")
    }

    @Test func aNetworkMakesAtMostItsAccountsAnHour() throws {
        let (_, live) = try AllowedHostsTests.start {
            $0.accounts.signUp = true
            $0.accounts.signUpsPerNetworkPerHour = 2
            $0.server.trustedProxies = try TrustedProxies(["127.0.0.1"])
        }
        for index in 1...2 {
            let client = try Self.atSignUp(live, from: "203.0.113.\(index)")
            #expect(
                try Self.signUp(client, "user\(index)", "a long passphrase", from: "203.0.113.\(index)").status == 200)
        }
        let third = try Self.atSignUp(live, from: "203.0.113.3")
        let refused = try Self.signUp(third, "user3", "a long passphrase", from: "203.0.113.3")
        #expect(refused.status == 429)
        #expect(Int(refused.headers["Retry-After"] ?? "") ?? 0 > 0)
        // Another network still may.
        let other = try Self.atSignUp(live, from: "198.51.100.1")
        #expect(try Self.signUp(other, "user4", "a long passphrase", from: "198.51.100.1").status == 200)
    }

    @Test func theSignUpScreenComesBackAfterARestart() throws {
        let folder = try TemporaryDirectory("signup")
        defer { folder.remove() }
        let store = folder.path("store.sqlite")
        func start() throws -> (ServerProcess, Int) {
            try RestorationTests.start(store: store, environment: ["APPSHELL_SIGN_UP": "true"])
        }
        var (server, port) = try start()
        var client = TestClient(port: port)
        _ = try client.get("/api/state")
        // A session that holds values (a visitor's that holds none is kept in memory only).
        _ = try RestorationTests.act(client, #"{"action": "login", "username": "demo", "password": "appshell"}"#)
        #expect(try RestorationTests.act(client, #"{"action": "logout"}"#)["screen"] == "login")
        #expect(try Self.act(client, "createAccount").json["screen"] == "signup")
        #expect(try Self.signUp(client, "x", "short").status == 422)
        RestorationTests.stop(server, "SIGKILL")
        let cookies = client.cookies
        (server, port) = try start()
        defer { RestorationTests.stop(server, "SIGTERM") }
        client = TestClient(port: port)
        client.cookies = cookies
        #expect(try client.get("/api/state").json["screen"] == "signup")
        #expect(try client.get("/").text.contains("A password has at least 8 characters."))
        #expect(try Self.act(client, "logIn").json["screen"] == "login")
    }
}

/// The framework's account screen on the demo: a password change asks for the current password,
/// gives the session a new id, and the new password is the one that logs in.
@Suite struct ChangePasswordTests {
    static func change(_ client: TestClient, current: String, new: String) throws -> TestResponse {
        try client.postJSON(
            "/api/actions",
            JSON.object(["action": "changePassword", "current": .string(current), "new": .string(new)])
                .serializedString)
    }

    @Test func aPasswordChangeAsksForTheCurrentOneAndRotatesTheSession() throws {
        let (_, live) = try AllowedHostsTests.start { $0.accounts.signUp = true }
        let client = try SignUpTests.atSignUp(live)
        #expect(try SignUpTests.signUp(client, "carol", "first passphrase").status == 200)
        let shown = try SignUpTests.act(client, "account")
        #expect(shown.json["presented"] == "account")
        #expect(try client.get("/").text.contains("Logged in as carol."))
        // The new password's rules, then the current password, are checked.
        let short = try Self.change(client, current: "first passphrase", new: "short")
        #expect(short.status == 422)
        #expect(short.json["error"] == "A password has at least 8 characters.")
        let wrong = try Self.change(client, current: "not it at all", new: "second passphrase")
        #expect(wrong.status == 401)
        #expect(wrong.json["error"] == "The current password is wrong.")
        let cookie = client.cookies
        let changed = try Self.change(client, current: "first passphrase", new: "second passphrase")
        #expect(changed.status == 200)
        #expect(changed.json["presented"] == "account")
        #expect(changed.headers["Set-Cookie"] != nil)
        #expect(client.cookies != cookie)
        #expect(try client.get("/").text.contains("Your password was changed."))
        #expect(try SignUpTests.act(client, "close").json["presented"] == .null)
        // Only the new password logs in now.
        let other = try LoginLimitTests.visitor(live)
        let old = try other.postJSON(
            "/api/actions", #"{"action": "login", "username": "carol", "password": "first passphrase"}"#)
        #expect(old.status == 401)
        let new = try other.postJSON(
            "/api/actions", #"{"action": "login", "username": "carol", "password": "second passphrase"}"#)
        #expect(new.status == 200)
    }
}

/// Log out everywhere, and a password change, end the user's other sessions: their next request
/// is a visitor's, their open pages' streams end, and other users' sessions are untouched.
@Suite struct LogOutEverywhereTests {
    /// A client logged in as `demo`.
    static func loggedIn(_ live: LiveServer) throws -> TestClient {
        let client = try LoginLimitTests.visitor(live)
        #expect(try LoginLimitTests.right(client).status == 200)
        return client
    }

    @Test func logOutEverywhereEndsEverySessionOfTheUserAndTheirStreams() throws {
        let (_, live) = try AllowedHostsTests.start { $0.accounts.signUp = true }
        let phone = try Self.loggedIn(live)
        let laptop = try Self.loggedIn(live)
        let someoneElse = try SignUpTests.atSignUp(live)
        #expect(try SignUpTests.signUp(someoneElse, "erin", "erin's passphrase").status == 200)
        let (stream, head) = try LiveEventsTests.openStream(
            live.port, cookie: SessionIsolationTests.cookieHeader(phone))
        #expect(head.hasPrefix("HTTP/1.1 200"))
        _ = try stream.read(through: "}\n\n")

        #expect(try SignUpTests.act(laptop, "account").json["presented"] == "account")
        let out = try SignUpTests.act(laptop, "logOutEverywhere")
        #expect(out.status == 200)
        #expect(out.json["screen"] == "login")
        #expect(out.json["defaults"]?["isLogin"] == false)
        // The phone's page stream ends, and its next request is a visitor's.
        _ = try stream.readToEnd()
        // (A visitor's state: the splash, or the login once the splash is done; nothing stored.)
        let after = try phone.get("/api/state")
        #expect(["splash", "login"].contains(after.json["screen"]?.stringValue ?? ""))
        #expect(after.json["defaults"] == [:])
        // Another user is still logged in.
        #expect(try someoneElse.get("/api/state").json["screen"] == "main")
    }

    @Test func aPasswordChangeEndsTheOtherSessionsButNotThisOne() throws {
        let (_, live) = try AllowedHostsTests.start { $0.accounts.signUp = true }
        let first = try SignUpTests.atSignUp(live)
        #expect(try SignUpTests.signUp(first, "dana", "first passphrase").status == 200)
        let second = try LoginLimitTests.visitor(live)
        let login = try second.postJSON(
            "/api/actions", #"{"action": "login", "username": "dana", "password": "first passphrase"}"#)
        #expect(login.json["screen"] == "main")
        _ = try SignUpTests.act(first, "account")
        let changed = try ChangePasswordTests.change(first, current: "first passphrase", new: "second passphrase")
        #expect(changed.status == 200)
        #expect(changed.json["view"]?["content"]?.serializedString.contains("other sessions were logged out") == true)
        #expect(try first.get("/api/state").json["presented"] == "account")
        let after = try second.get("/api/state")
        #expect(["splash", "login"].contains(after.json["screen"]?.stringValue ?? ""))
        #expect(after.json["defaults"] == [:])
    }

    @Test func theEndedSessionsAreGoneFromTheStoreAfterARestart() throws {
        let folder = try TemporaryDirectory("everywhere")
        defer { folder.remove() }
        let store = folder.path("store.sqlite")
        func start() throws -> (ServerProcess, Int) { try RestorationTests.start(store: store) }
        var (server, port) = try start()
        let login = #"{"action": "login", "username": "demo", "password": "appshell"}"#
        let phone = TestClient(port: port)
        _ = try phone.get("/api/state")
        #expect(try RestorationTests.act(phone, login)["screen"] == "main")
        let laptop = TestClient(port: port)
        _ = try laptop.get("/api/state")
        #expect(try RestorationTests.act(laptop, login)["screen"] == "main")
        _ = try RestorationTests.act(laptop, #"{"action": "account"}"#)
        #expect(try RestorationTests.act(laptop, #"{"action": "logOutEverywhere"}"#)["screen"] == "login")
        RestorationTests.stop(server, "SIGKILL")
        (server, port) = try start()
        defer { RestorationTests.stop(server, "SIGTERM") }
        let again = TestClient(port: port)
        again.cookies = phone.cookies
        let state = try again.get("/api/state").json
        #expect(state["screen"] != "main")
        #expect(state["defaults"] == [:])
    }
}
