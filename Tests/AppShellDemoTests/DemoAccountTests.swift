import AppShell
import AppShellAuth
import AppShellDemo
import AppShellJSON
import Foundation
import Testing

/// The shipped demo account (`demo` / `appshell`) is served only on loopback unless allowed:
/// anyone who reads the README, the documentation or the OpenAPI document can log in with it.
@Suite struct DemoAccountTests {
    static let configFile = CommandTests.packageRoot.appendingPathComponent("config.json").path

    static func load(_ environment: [String: String]) throws(ConfigurationError) -> DemoConfiguration {
        try DemoConfiguration.load(path: configFile, required: true, environment: environment)
    }

    /// The hash the check looks for is the one config.json ships, and it is the password `appshell`.
    @Test func theCheckedHashIsTheShippedOne() throws {
        let shipped = try Self.load([:])
        #expect(shipped.accounts.users["demo"] == DemoConfiguration.demoPasswordHash)
        #expect(PasswordHash.verify(password: "appshell", against: DemoConfiguration.demoPasswordHash))
    }

    @Test(arguments: ["0.0.0.0", "::", "10.1.2.3"])
    func aNonLoopbackHostWithTheDemoAccountIsAConfigurationError(host: String) throws {
        #expect(throws: ConfigurationError.self) { try Self.load(["APPSHELL_HOST": host]) }
        let message = ConfigurationTests.message { _ = try Self.load(["APPSHELL_HOST": host]) } ?? ""
        #expect(message.contains("the demo account"), "\(message)")
        #expect(message.contains("APPSHELL_ALLOW_DEMO_ACCOUNT"))
        #expect(message.contains("APPSHELL_USERS"))
    }

    @Test func loopbackTheAllowanceOrOwnUsersStart() throws {
        #expect(try Self.load(["APPSHELL_HOST": "127.0.0.1"]).accounts.users["demo"] != nil)
        #expect(try Self.load(["APPSHELL_HOST": "::1"]).accounts.users["demo"] != nil)
        let allowed = try Self.load(["APPSHELL_HOST": "0.0.0.0", "APPSHELL_ALLOW_DEMO_ACCOUNT": "true"])
        #expect(allowed.allowDemoAccount)
        let hash = try PasswordHash.make(password: "a long passphrase")
        let own = try Self.load([
            "APPSHELL_HOST": "0.0.0.0", "APPSHELL_USERS": #"[{"username":"alice","passwordHash":"\#(hash)"}]"#,
        ])
        #expect(own.accounts.users.keys.sorted() == ["alice"])
    }

    /// The real executable: exit status 2 and one line on standard error, as other configuration
    /// errors.
    @Test func theServerRefusesToStart() throws {
        let running = try CommandTests.run(environment: ["APPSHELL_HOST": "0.0.0.0", "APPSHELL_PORT": "0"])
        #expect(running.waitForExit() == 2)
        let errors = running.errorText  // read once: it reads the pipe to its end
        #expect(errors.hasPrefix("appshell: configuration error: the demo account"), "\(errors)")
        #expect(errors.filter { $0 == "\n" }.count == 1)
    }
}
