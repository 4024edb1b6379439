import AppShell
import AppShellConcurrency
import AppShellDemo
import Foundation
import Testing

/// config.json and APPSHELL_* variables: values, defaults, and the errors that stop a start.
@Suite struct ConfigurationTests {
    static func write(_ text: String) throws -> String {
        let path = NSTemporaryDirectory() + "appshell-config-\(UUID().uuidString).json"
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    static func message(_ body: () throws -> Void) -> String? {
        do {
            try body()
            return nil
        } catch {
            return "\(error)"
        }
    }

    @Test func defaultsWithoutAFile() throws {
        let configuration = try DemoConfiguration.load(
            path: "/nonexistent/config.json", required: false, environment: [:])
        #expect(configuration.server.host == "127.0.0.1")
        #expect(configuration.server.port == 8080)
        #expect(configuration.server.maxBodyBytes == 1_048_576)
        #expect(configuration.publicDirectory == "Public")
        #expect(configuration.server.threads >= 1)
    }

    @Test func readsTheFileAndTheEnvironmentOverridesIt() throws {
        let path = try Self.write(#"{"port": 9000, "host": "0.0.0.0", "accessLog": false, "maxConnectionsPerIP": 8}"#)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let configuration = try DemoConfiguration.load(
            path: path, required: true,
            environment: ["APPSHELL_PORT": "9100", "APPSHELL_MAX_CONNECTIONS_PER_IP": "16", "HOME": "/root"])
        #expect(configuration.server.port == 9100)
        #expect(configuration.server.host == "0.0.0.0")
        #expect(configuration.server.accessLog == false)
        #expect(configuration.server.maxConnectionsPerIP == 16)
    }

    @Test func sessionKeysHaveTheirDefaultsAndVariables() throws {
        let defaults = try DemoConfiguration.load(path: "/nonexistent/config.json", required: false, environment: [:])
        #expect(defaults.store == .sqlite)
        #expect(defaults.storePath == "data/appshell.sqlite")
        #expect(defaults.cookieName == "appshell_session")
        #expect(defaults.secureCookies == false)
        #expect(defaults.sessions.idleTimeoutSeconds == 1800)
        #expect(defaults.sessions.absoluteTimeoutSeconds == 28_800)
        #expect(defaults.sessions.maxSessionsInMemory == 100_000)
        let configured = try DemoConfiguration.load(
            path: "/nonexistent/config.json", required: false,
            environment: [
                "APPSHELL_STORE": "memory", "APPSHELL_SECURE_COOKIES": "true",
                "APPSHELL_SESSION_IDLE_TIMEOUT_SECONDS": "60", "APPSHELL_MAX_SESSIONS_IN_MEMORY": "10",
            ])
        #expect(configured.store == .memory)
        #expect(configured.secureCookies)
        #expect(configured.sessions.idleTimeoutSeconds == 60)
        #expect(configured.sessions.maxSessionsInMemory == 10)
    }

    /// Found by the config fuzz target: a variable whose name or value holds a line break made
    /// the error, which the operator reads as one line, two.
    @Test(arguments: [
        ["APPSHELL_ALLOWED_HOST\r": "x"], ["APPSHELL_PORT": "80\n80"], ["APPSHELL_NOPE\u{2028}": "1"],
    ])
    func anErrorStaysOneLineWhateverItQuotes(environment: [String: String]) {
        do {
            _ = try DemoConfiguration.load(path: "/nonexistent/config.json", required: false, environment: environment)
            Issue.record("\(environment) was accepted")
        } catch {
            let lines = error.description.split(whereSeparator: \.isNewline).count
            #expect(lines == 1, "\(error.description.debugDescription)")
            #expect(error.description.contains("\\u{"))
        }
    }

    @Test func theShippedConfigLoads() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let configuration = try DemoConfiguration.load(
            path: root.appendingPathComponent("config.json").path, required: true, environment: [:])
        #expect(configuration.server.port == 8080)
        #expect(configuration.accounts.users.keys.sorted() == ["demo"])
        #expect(configuration.splashDelayMilliseconds == 1000)
    }

    @Test(arguments: [
        (#"{"prot": 80}"#, #"unknown key "prot""#),
        (#"{"Port": 80}"#, #"unknown key "Port" (did you mean "port"?)"#),
        (#"{"port": "80"}"#, #""port" must be an integer from 0 to 65535, got "80""#),
        (#"{"port": 80.5}"#, #""port" must be an integer from 0 to 65535, got 80.5"#),
        (#"{"port": 70000}"#, #""port" must be an integer from 0 to 65535, got 70000"#),
        (#"{"accessLog": "yes"}"#, #""accessLog" must be true or false, got "yes""#),
        (
            #"{"host": ""}"#,
            #""host" must be an IPv4 or IPv6 address literal such as 127.0.0.1, 0.0.0.0, ::1 or :: (no brackets), got """#
        ),
        (
            #"{"host": "localhost"}"#,
            #""host" must be an IPv4 or IPv6 address literal such as 127.0.0.1, 0.0.0.0, ::1 or :: (no brackets), got "localhost""#
        ),
        (#"{"idleTimeoutSeconds": 0}"#, #""idleTimeoutSeconds" must be an integer from 1 to 86400, got 0"#),
        (
            #"{"allowedHosts": ["app.example.com", "exa mple.com"]}"#,
            #""allowedHosts" must be an array of host names (no port), IP addresses, or .example.com / *.example.com patterns, got "exa mple.com""#
        ),
        (
            #"{"allowedHosts": ["app.example.com:443"]}"#,
            #""allowedHosts" must be an array of host names (no port), IP addresses, or .example.com / *.example.com patterns, got "app.example.com:443""#
        ),
        (
            #"{"allowedHosts": "app.example.com"}"#,
            #""allowedHosts" must be an array of host names (no port), IP addresses, or .example.com / *.example.com patterns, got "app.example.com""#
        ),
        (
            #"{"trustedProxies": ["10.0.0.0/33"]}"#,
            #""trustedProxies" must be an array of IPv4 or IPv6 addresses or CIDR ranges such as 10.0.0.0/8, got "10.0.0.0/33""#
        ),
        (
            #"{"trustedProxies": [1]}"#,
            #""trustedProxies" must be an array of IPv4 or IPv6 addresses or CIDR ranges such as 10.0.0.0/8, got an integer"#
        ),
        (
            #"{"passwordCheckThreads": 0}"#,
            #""passwordCheckThreads" must be an integer from 1 to 256, got 0"#
        ),
        (
            #"{"passwordCheckQueue": 0}"#,
            #""passwordCheckQueue" must be an integer from 1 to 65536, got 0"#
        ),
        (
            #"{"storeWriteQueue": 0}"#,
            #""storeWriteQueue" must be an integer from 1 to 1000000, got 0"#
        ),
        (#"{"threads": 0}"#, #""threads" must be an integer from 1 to 1024, got 0"#),
        (#"{"publicDirectory": ["a"]}"#, #""publicDirectory" must be a non-empty string, got an array"#),
        (#"[1]"#, "must hold a JSON object, not an array"),
        (#"{"store": "postgres"}"#, #""store" must be one of "sqlite", "memory", "redis", got "postgres""#),
        (
            #"{"storeURL": "http://cache:6379"}"#,
            #""storeURL" must be a redis://[user:password@]host[:port][/db], redis-cluster://[user:password@]host:port[,host:port...] or unix:///path[?db=N&password=...] URL, got "http:…" (not a redis://, redis-cluster:// or unix:// URL (rediss://, Redis over TLS, is not supported))"#
        ),
        (
            #"{"cookieName": "my session"}"#,
            #""cookieName" must be a non-empty token of letters, digits and !#$%&'*+-.^_`|~, got "my session""#
        ),
        (
            #"{"sessionIdleTimeoutSeconds": 0}"#,
            #""sessionIdleTimeoutSeconds" must be an integer from 1 to 31536000, got 0"#
        ),
        (#"{"port": 80,}"#, "not valid JSON: unexpected character '}', expected a string key at line 1, column 13"),
    ])
    func fileErrorsNameTheKey(text: String, expected: String) throws {
        let path = try Self.write(text)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let message = Self.message { _ = try DemoConfiguration.load(path: path, required: true, environment: [:]) }
        #expect(message == "\(path): \(expected)")
    }

    @Test(arguments: [
        (["APPSHELL_PORT": "eighty"], #"environment: APPSHELL_PORT must be an integer from 0 to 65535, got "eighty""#),
        (["APPSHELL_PORT": "-1"], "environment: APPSHELL_PORT must be an integer from 0 to 65535, got -1"),
        (["APPSHELL_ACCESS_LOG": "maybe"], #"environment: APPSHELL_ACCESS_LOG must be true or false, got "maybe""#),
        (["APPSHELL_PROT": "80"], "environment: unknown variable APPSHELL_PROT"),
        (
            ["APPSHELL_STORE_URL": "redis://app:secret@cache:99999"],
            "environment: APPSHELL_STORE_URL must be a redis://[user:password@]host[:port][/db], redis-cluster://[user:password@]host:port[,host:port...] or unix:///path[?db=N&password=...] URL, got \"redis:…\" (the port must be a number from 1 to 65535)"
        ),
        // Issue 31 (10): the forms the old redaction did not know quoted the password.
        (
            ["APPSHELL_STORE_URL": "redis:/:pw@host"],
            "environment: APPSHELL_STORE_URL must be a redis://[user:password@]host[:port][/db], redis-cluster://[user:password@]host:port[,host:port...] or unix:///path[?db=N&password=...] URL, got \"redis:…\" (not a redis://, redis-cluster:// or unix:// URL (rediss://, Redis over TLS, is not supported))"
        ),
        (
            ["APPSHELL_STORE_URL": "unix:///s?db=2&passWORD=pw"],
            "environment: APPSHELL_STORE_URL must be a redis://[user:password@]host[:port][/db], redis-cluster://[user:password@]host:port[,host:port...] or unix:///path[?db=N&password=...] URL, got \"unix:…\" (an unknown parameter (db, password and user are known, in lowercase))"
        ),
    ])
    func environmentErrorsNameTheVariable(environment: [String: String], expected: String) {
        let message = Self.message {
            _ = try DemoConfiguration.load(path: "/nonexistent/config.json", required: false, environment: environment)
        }
        #expect(message == expected)
    }

    @Test func aMissingRequiredFileIsAnError() {
        let message = Self.message {
            _ = try DemoConfiguration.load(path: "/nonexistent/config.json", required: true, environment: [:])
        }
        #expect(message == "/nonexistent/config.json: cannot be read (missing or not permitted)")
    }
}

extension ConfigurationTests {
    @Test func hostAndIdleTimeoutAreCheckedWhenLoaded() {
        let host = Self.message {
            _ = try DemoConfiguration.load(
                path: "/nonexistent/config.json", required: false, environment: ["APPSHELL_HOST": "localhost"])
        }
        #expect(host?.contains("APPSHELL_HOST") == true)
        let idle = Self.message {
            _ = try DemoConfiguration.load(
                path: "/nonexistent/config.json", required: false, environment: ["APPSHELL_IDLE_TIMEOUT_SECONDS": "0"])
        }
        #expect(idle?.contains("APPSHELL_IDLE_TIMEOUT_SECONDS") == true)
    }
}

extension ConfigurationTests {
    @Test func listsComeAsJSONArraysOrCommaSeparatedVariables() throws {
        let defaults = try DemoConfiguration.load(path: "/nonexistent/config.json", required: false, environment: [:])
        #expect(defaults.server.allowedHosts.entries == [])
        #expect(defaults.server.trustedProxies.isEmpty)
        #expect(defaults.server.idleTimeoutSeconds == 30)
        #expect(defaults.accounts.passwordCheckThreads == max(1, AccountsConfiguration.processorCount / 2))
        #expect(defaults.accounts.passwordCheckQueue == 64)
        #expect(defaults.storeWriteQueue == 1024)
        let path = try Self.write(
            #"{"allowedHosts": ["app.example.com", ".example.org"], "trustedProxies": ["10.0.0.0/8"]}"#)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let file = try DemoConfiguration.load(path: path, required: true, environment: [:])
        #expect(file.server.allowedHosts.entries == ["app.example.com", ".example.org"])
        #expect(file.server.trustedProxies.entries == ["10.0.0.0/8"])
        let environment = try DemoConfiguration.load(
            path: path, required: true,
            environment: [
                "APPSHELL_ALLOWED_HOSTS": " a.example.com , [::1]", "APPSHELL_TRUSTED_PROXIES": #"["fd00::/8"]"#,
                "APPSHELL_PASSWORD_CHECK_THREADS": "3", "APPSHELL_PASSWORD_CHECK_QUEUE": "5",
                "APPSHELL_STORE_WRITE_QUEUE": "7",
            ])
        #expect(environment.server.allowedHosts.entries == ["a.example.com", "[::1]"])
        #expect(environment.server.trustedProxies.entries == ["fd00::/8"])
        #expect(environment.accounts.passwordCheckThreads == 3)
        #expect(environment.accounts.passwordCheckQueue == 5)
        #expect(environment.storeWriteQueue == 7)
        let empty = try DemoConfiguration.load(
            path: path, required: true, environment: ["APPSHELL_ALLOWED_HOSTS": "", "APPSHELL_TRUSTED_PROXIES": ""])
        #expect(empty.server.allowedHosts.entries == [])
        #expect(empty.server.trustedProxies.isEmpty)
    }
}
