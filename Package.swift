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
        // A JSON value with a strict parser and a serializer; no Foundation on the hot path.
        .target(name: "AppShellJSON"),
        // The HTTP layer: the only Swift code that calls MHD_* or holds unsafe pointers.
        .target(name: "AppShellHTTP", dependencies: ["CMicroHTTPD", "AppShellJSON"]),
        // Test support: a live server on port 0 and a small blocking HTTP client.
        .target(name: "AppShellTesting", dependencies: ["AppShellHTTP"]),
        // The demo app: configuration, routes, and (later) its screens and coordinators.
        .target(name: "AppShellDemo", dependencies: ["AppShellHTTP", "AppShellJSON"]),
        .executableTarget(name: "appshell", dependencies: ["AppShellDemo", "AppShellHTTP"]),
        .testTarget(name: "AppShellJSONTests", dependencies: ["AppShellJSON"]),
        .testTarget(name: "AppShellHTTPTests", dependencies: ["AppShellHTTP", "AppShellTesting"]),
        .testTarget(
            name: "AppShellDemoTests",
            dependencies: ["AppShellDemo", "AppShellHTTP", "AppShellTesting"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
