// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "AppShell",
    products: [
        .executable(name: "appshell", targets: ["appshell"])
    ],
    targets: [
        // libmicrohttpd from Debian; only AppShellHTTP imports it.
        .systemLibrary(
            name: "CMicroHTTPD",
            pkgConfig: "libmicrohttpd",
            providers: [.apt(["libmicrohttpd-dev"])]
        ),
        // The lock type shared by every module (a pthread mutex that ThreadSanitizer understands).
        .target(name: "AppShellConcurrency"),
        // A JSON value with a strict parser and a serializer; no Foundation on the hot path.
        .target(name: "AppShellJSON"),
        // SQLite from Debian; only AppShellSessions imports it.
        .systemLibrary(
            name: "CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"])]
        ),
        // libsodium from Debian; only AppShellAuth imports it.
        .systemLibrary(
            name: "CSodium",
            pkgConfig: "libsodium",
            providers: [.apt(["libsodium-dev"])]
        ),
        // Password hashing (Argon2id) and the login rate limiter; no HTTP or session types.
        .target(name: "AppShellAuth", dependencies: ["CSodium", "AppShellConcurrency"]),
        // Sessions, their registry and the defaults store with its backends; no HTTP types.
        .target(name: "AppShellSessions", dependencies: ["CSQLite", "AppShellJSON", "AppShellConcurrency"]),
        // The HTTP layer: the only Swift code that calls MHD_* or holds unsafe pointers.
        .target(name: "AppShellHTTP", dependencies: ["CMicroHTTPD", "AppShellJSON", "AppShellConcurrency"]),
        // The app shell: sessions over HTTP (cookie policy), and later the root controller.
        .target(
            name: "AppShell",
            dependencies: ["AppShellHTTP", "AppShellSessions", "AppShellJSON", "AppShellAuth", "AppShellConcurrency"]),
        // Test support: a live server on port 0 and a small blocking HTTP client.
        .target(name: "AppShellTesting", dependencies: ["AppShellHTTP", "AppShellConcurrency"]),
        // The demo app: configuration, routes, and (later) its screens and coordinators.
        .target(
            name: "AppShellDemo",
            dependencies: ["AppShell", "AppShellAuth", "AppShellHTTP", "AppShellSessions", "AppShellJSON"]),
        .executableTarget(name: "appshell", dependencies: ["AppShellDemo", "AppShellHTTP"]),
        // A test-only server over the session registry, run as a process by the session tests.
        .executableTarget(
            name: "SessionProbe", dependencies: ["AppShell", "AppShellHTTP", "AppShellSessions", "AppShellJSON"],
            path: "Tests/SessionProbe"),
        .testTarget(name: "AppShellJSONTests", dependencies: ["AppShellJSON"]),
        // Password hashes and the rate limiter, with a controllable clock.
        .testTarget(name: "AppShellAuthTests", dependencies: ["AppShellAuth"]),
        .testTarget(name: "AppShellSessionsTests", dependencies: ["AppShellSessions", "AppShellConcurrency"]),
        .testTarget(
            name: "AppShellHTTPTests", dependencies: ["AppShellHTTP", "AppShellTesting", "AppShellConcurrency"]),
        .testTarget(
            name: "AppShellTests", dependencies: ["AppShell", "AppShellHTTP", "AppShellSessions", "AppShellTesting"]),
        .testTarget(
            name: "AppShellDemoTests",
            dependencies: [
                "AppShell", "AppShellDemo", "AppShellHTTP", "AppShellSessions", "AppShellTesting",
                "AppShellConcurrency",
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
