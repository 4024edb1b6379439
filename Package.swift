// swift-tools-version:6.0
import PackageDescription

// No target has unsafe flags: SwiftPM refuses them in a package another one depends on. The
// run-time exclusivity checks the release build used to leave out (`-enforce-exclusivity=unchecked`)
// are left out only where callgrind found them on the request path, with
// `@exclusivity(unchecked)` beside the measurement (the Performance article).

let package = Package(
    name: "AppShell",
    products: [
        // The framework. Its modules stay separate (each imports only those below it, see the
        // Architecture article); `AppShell` re-exports the others, so an app writes one
        // `import AppShell`. What they share among themselves is `package`: an app sees their
        // public API only (`make api-check` holds it to the last release's).
        .library(
            name: "AppShell",
            targets: [
                "AppShell", "AppShellHTTP", "AppShellSessions", "AppShellJSON", "AppShellAuth", "AppShellConcurrency",
            ]),
        // Tests of an app: a live server on port 0 and a blocking HTTP client.
        .library(name: "AppShellTesting", targets: ["AppShellTesting"]),
        // The demo app.
        .executable(name: "appshell", targets: ["appshell"]),
    ],
    targets: [
        // libmicrohttpd from Debian; only AppShellHTTP imports it.
        .systemLibrary(
            name: "CMicroHTTPD",
            pkgConfig: "libmicrohttpd",
            providers: [.apt(["libmicrohttpd-dev"])]
        ),
        // What every module shares, on pthreads (which ThreadSanitizer understands) and without
        // Foundation: the lock, a condition, background threads, the logger.
        .target(name: "AppShellConcurrency", dependencies: ["AppShellJSON"]),
        // A JSON value with a strict parser and a serializer; no Foundation on the hot path.
        .target(name: "AppShellJSON"),
        // SQLite from Debian; only AppShellSessions imports it.
        .systemLibrary(
            name: "CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"])]
        ),
        // hiredis from Debian; only AppShellSessions imports it (the Redis store). Without
        // pkg-config: its flags carry -D_FILE_OFFSET_BITS=64, which SwiftPM drops with a warning;
        // the header and the library are in the default paths.
        .systemLibrary(
            name: "CHiredis",
            providers: [.apt(["libhiredis-dev"])]
        ),
        // libsodium from Debian; only AppShellAuth imports it.
        .systemLibrary(
            name: "CSodium",
            pkgConfig: "libsodium",
            providers: [.apt(["libsodium-dev"])]
        ),
        // Password hashing (Argon2id) and the login rate limiter; no HTTP or session types.
        .target(
            name: "AppShellAuth", dependencies: ["CSodium", "AppShellConcurrency"]),
        // Sessions, their registry and the defaults store with its backends; no HTTP types.
        .target(
            name: "AppShellSessions",
            dependencies: ["CSQLite", "CHiredis", "CSodium", "AppShellJSON", "AppShellConcurrency"]),
        // The HTTP layer: the only Swift code that calls MHD_* or holds unsafe pointers.
        .target(
            name: "AppShellHTTP", dependencies: ["CMicroHTTPD", "AppShellJSON", "AppShellConcurrency"]),
        // The app shell: the root controller, screens, coordinators and navigation, sessions over
        // HTTP (cookie policy), the JSON API, pages and event streams, accounts.
        .target(
            name: "AppShell",
            dependencies: ["AppShellHTTP", "AppShellSessions", "AppShellJSON", "AppShellAuth", "AppShellConcurrency"],
            // The page script, the base stylesheet and the OpenAPI document's template, compiled in
            // as `PackageResources.app_js`, `.appshell_css` and `.APIDocumentTemplate_json` (byte
            // arrays): the framework serves them from memory, so an app needs no copy.
            resources: [
                .embedInCode("Pages/Resources/app.js"), .embedInCode("Pages/Resources/appshell.css"),
                .embedInCode("Pages/Resources/APIDocumentTemplate.json"),
            ]),
        // Test support: a live server on port 0 and a small blocking HTTP client.
        .target(name: "AppShellTesting", dependencies: ["AppShellHTTP", "AppShellConcurrency", "CMicroHTTPD"]),
        // The demo app: its configuration, screens, coordinators and routes.
        .target(
            name: "AppShellDemo",
            dependencies: [
                "AppShell", "AppShellAuth", "AppShellHTTP", "AppShellSessions", "AppShellJSON", "AppShellConcurrency",
            ]),
        .executableTarget(
            name: "appshell", dependencies: ["AppShell", "AppShellDemo", "AppShellConcurrency"]),
        // A test-only server over the session registry, run as a process by the session tests.
        .executableTarget(
            name: "SessionProbe", dependencies: ["AppShell", "AppShellHTTP", "AppShellSessions", "AppShellJSON"],
            path: "Tests/SessionProbe"),
        // What tests of the store share: a backend forwarding to another, for backends that hold,
        // pause or fail one operation.
        .target(
            name: "DefaultsBackendTestSupport", dependencies: ["AppShellSessions"],
            path: "Tests/DefaultsBackendTestSupport"),
        .testTarget(name: "AppShellJSONTests", dependencies: ["AppShellJSON"]),
        // The threads, condition and lock, under ThreadSanitizer too (make tsan-test).
        .testTarget(name: "AppShellConcurrencyTests", dependencies: ["AppShellConcurrency"]),
        // Password hashes and the rate limiter, with a controllable clock.
        .testTarget(name: "AppShellAuthTests", dependencies: ["AppShellAuth"]),
        .testTarget(
            name: "AppShellSessionsTests",
            dependencies: ["AppShellSessions", "AppShellConcurrency", "DefaultsBackendTestSupport"]),
        .testTarget(
            name: "AppShellHTTPTests", dependencies: ["AppShellHTTP", "AppShellTesting", "AppShellConcurrency"]),
        // The testing kit's own: forms read, submitted and followed, logins, waiting for a state.
        .testTarget(
            name: "AppShellTestingTests",
            dependencies: ["AppShellTesting", "AppShellHTTP", "AppShellJSON", "AppShellConcurrency"]),
        .testTarget(
            name: "AppShellTests",
            dependencies: [
                "AppShell", "AppShellHTTP", "AppShellSessions", "AppShellTesting", "DefaultsBackendTestSupport",
            ]),
        .testTarget(
            name: "AppShellDemoTests",
            dependencies: [
                "AppShell", "AppShellDemo", "AppShellHTTP", "AppShellSessions", "AppShellTesting",
                "AppShellConcurrency", "DefaultsBackendTestSupport",
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)

// The libFuzzer targets (Fuzz/, `make fuzz`): declared only when APPSHELL_FUZZ=1, which the
// Makefile sets for its own scratch path (.build/fuzz), so a plain `swift build` or `swift test`
// neither sees nor builds them. Each is an executable whose `LLVMFuzzerTestOneInput` calls one
// target of AppShellFuzzTargets; they link only with `--sanitize=fuzzer`, and so does nothing else
// here: the other executables and the tests are left out, and one `swift build` makes them all.
if Context.environment["APPSHELL_FUZZ"] == "1" {
    package.products = []
    package.targets.removeAll {
        $0.type == .executable || $0.type == .test
            || ["AppShellTesting", "DefaultsBackendTestSupport"].contains($0.name)
    }
    let fuzzTargets = [
        "request-target", "percent-encoding", "form", "cookie", "json", "actions", "last-event-id", "csrf-token",
        "config", "forwarded", "request",
    ]
    package.targets.append(
        .target(
            name: "AppShellFuzzTargets",
            dependencies: [
                "AppShell", "AppShellAuth", "AppShellDemo", "AppShellHTTP", "AppShellJSON", "AppShellSessions",
                "AppShellConcurrency",
            ],
            path: "Fuzz/Targets"))
    for name in fuzzTargets {
        package.targets.append(
            .executableTarget(name: "fuzz-" + name, dependencies: ["AppShellFuzzTargets"], path: "Fuzz/Entry/" + name))
    }
}
