// swift-tools-version:6.0
import PackageDescription

// Notes: an app built on AppShell, as your own app would be. It depends on the framework by path
// (your own app would use the repository's URL) and uses only its library products.
let package = Package(
    name: "Notes",
    products: [
        .executable(name: "notes", targets: ["notes"])
    ],
    dependencies: [
        .package(name: "AppShell", path: "../..")
    ],
    targets: [
        // The app: its screens, coordinators, configuration and server; a library so tests import it.
        .target(
            name: "NotesApp",
            dependencies: [.product(name: "AppShell", package: "AppShell")]),
        // `notes`: the command that loads the configuration and serves the app.
        .executableTarget(
            name: "notes",
            dependencies: ["NotesApp", .product(name: "AppShell", package: "AppShell")]),
        // The app's tests, through AppShellTesting: in process, and live on port 0.
        .testTarget(
            name: "NotesTests",
            dependencies: [
                "NotesApp",
                .product(name: "AppShell", package: "AppShell"),
                .product(name: "AppShellTesting", package: "AppShell"),
            ]),
    ],
    swiftLanguageModes: [.v6]
)
