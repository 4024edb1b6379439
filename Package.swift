// swift-tools-version:6.0
import PackageDescription

// No target has unsafe flags (but the fuzz targets' section at the end, only with APPSHELL_FUZZ=1):
// SwiftPM refuses them in a package another one depends on. The
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
        .target(name: "AppShellConcurrency", dependencies: ["CLinuxScheduling", "AppShellJSON"]),
        // sched_setattr and sched_getattr, which Glibc before 2.41 does not wrap (a header only);
        // only AppShellConcurrency imports it, for the shortest time slice of a pool's rescheduler.
        .systemLibrary(name: "CLinuxScheduling"),
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
        // pause or fail one operation; real Redis servers and clusters; a started relay's inbox.
        .target(
            name: "DefaultsBackendTestSupport", dependencies: ["AppShellSessions", "AppShellConcurrency"],
            path: "Tests/DefaultsBackendTestSupport"),
        .testTarget(name: "AppShellJSONTests", dependencies: ["AppShellJSON"]),
        // The threads, condition and lock, under ThreadSanitizer too (make tsan-test).
        .testTarget(name: "AppShellConcurrencyTests", dependencies: ["AppShellConcurrency"]),
        // Password hashes and the rate limiter, with a controllable clock.
        .testTarget(name: "AppShellAuthTests", dependencies: ["AppShellAuth"]),
        .testTarget(
            name: "AppShellSessionsTests",
            dependencies: ["AppShellSessions", "AppShellConcurrency", "AppShellTesting", "DefaultsBackendTestSupport"]),
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

// The libFuzzer targets (Fuzz/, `make fuzz`, `make fuzz-test`): declared only when APPSHELL_FUZZ=1,
// which the Makefile sets for its AddressSanitizer builds (`--sanitize=address`: .build/asan, and
// make fuzz's optimized .build/fuzz), so a plain `swift build` or `swift test` neither sees nor
// builds them, and Examples/Notes, which depends on this package, never sees their unsafe flags.
// One build makes the tests, the executables and the fuzz targets: the framework's modules also
// get libFuzzer's coverage (all that `-sanitize=fuzzer` adds but the stack depth: edges, indirect
// calls, comparisons), and only the fuzz executables link libFuzzer (APPSHELL_FUZZER_RUNTIME, the toolchain's
// libclang_rt.fuzzer_no_main: each brings its own `main`, see Fuzz/Targets/FuzzDriver.swift).
if Context.environment["APPSHELL_FUZZ"] == "1" {
    let coverage = SwiftSetting.unsafeFlags([
        "-sanitize-coverage=edge,indirect-calls,trace-cmp,inline-8bit-counters,pc-table"
    ])
    let covered = [
        "AppShell", "AppShellAuth", "AppShellDemo", "AppShellHTTP", "AppShellJSON", "AppShellSessions",
        "AppShellConcurrency",
    ]
    for target in package.targets where covered.contains(target.name) {
        target.swiftSettings = (target.swiftSettings ?? []) + [coverage]
    }
    let fuzzTargets = [
        "request-target", "percent-encoding", "form", "cookie", "json", "actions", "last-event-id", "csrf-token",
        "config", "forwarded", "request",
    ]
    let fuzzerRuntime = Context.environment["APPSHELL_FUZZER_RUNTIME"] ?? "libclang_rt.fuzzer_no_main.a"
    package.targets += [
        .systemLibrary(name: "CLibFuzzer", path: "Fuzz/LibFuzzer"),
        .target(
            name: "AppShellFuzzTargets",
            dependencies: covered.map { .target(name: $0) } + ["CLibFuzzer"],
            path: "Fuzz/Targets",
            swiftSettings: [coverage]),
    ]
    for name in fuzzTargets {
        package.targets.append(
            .executableTarget(
                name: "fuzz-" + name, dependencies: ["AppShellFuzzTargets"], path: "Fuzz/Entry/" + name,
                linkerSettings: [.unsafeFlags(["-Xlinker", fuzzerRuntime, "-lstdc++"])]))
    }
}
