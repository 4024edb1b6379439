import AppShell
import Testing

/// Another app's configuration on the framework's loader: its own key beside the framework's, with
/// its variable and its error lines, and no key of the demo's.
@Suite struct AppConfigurationTests {
    struct NotesConfiguration: AppConfiguration {
        var shell = ShellConfiguration()
        var pageSize = 20

        static let keys =
            ShellConfiguration.keys.map { $0.scoped(to: \NotesConfiguration.shell) } + [
                ConfigurationKey("pageSize", .integer(1...500), "notes per page") { $1.pageSize = $0.integerValue! }
            ]
    }

    static func load(_ environment: [String: String]) throws(ConfigurationError) -> NotesConfiguration {
        try NotesConfiguration.load(path: "/nonexistent/config.json", required: false, environment: environment)
    }

    @Test func anAppsOwnKeyLoadsBesideTheFrameworksKeys() throws {
        let configuration = try Self.load(["APPSHELL_PAGE_SIZE": "50", "APPSHELL_PORT": "9000"])
        #expect(configuration.pageSize == 50)
        #expect(configuration.shell.server.port == 9000)
        #expect(try Self.load([:]).pageSize == 20)
    }

    @Test func anAppsOwnKeyIsCheckedLikeTheFrameworks() {
        #expect(throws: ConfigurationError("environment: APPSHELL_PAGE_SIZE must be an integer from 1 to 500, got 0")) {
            try Self.load(["APPSHELL_PAGE_SIZE": "0"])
        }
        #expect(throws: ConfigurationError("environment: unknown variable APPSHELL_PAGE_SIZES")) {
            try Self.load(["APPSHELL_PAGE_SIZES": "1"])
        }
    }

    @Test func theFrameworkKnowsNoKeyOfTheDemo() {
        for variable in ["APPSHELL_SPLASH_DELAY_MILLISECONDS", "APPSHELL_ALLOW_DEMO_ACCOUNT"] {
            #expect(throws: ConfigurationError("environment: unknown variable \(variable)")) {
                try ShellConfiguration.load(
                    path: "/nonexistent/config.json", required: false, environment: [variable: "1"])
            }
        }
    }

    @Test func accountsAreTheFrameworks() throws {
        let configuration = try ShellConfiguration.load(
            path: "/nonexistent/config.json", required: false, environment: ["APPSHELL_PASSWORD_CHECK_THREADS": "3"])
        #expect(configuration.accounts.passwordCheckThreads == 3)
        #expect(throws: ConfigurationError.self) {
            try ShellConfiguration.load(
                path: "/nonexistent/config.json", required: false, environment: ["APPSHELL_USERS": "1"])
        }
    }
}
