import Foundation

/// A directory of a test's own under the system's temporary directory (`TMPDIR`), named
/// `appshell-<purpose>-<UUID>`: `remove()` deletes it with everything in it.
///
/// Tests call `remove()` in a `defer` right after making one, so that nothing is left behind
/// whether the test passes, fails or throws (`make test` runs the suites with a `TMPDIR` of their
/// own and fails when anything is left in it).
public struct TemporaryDirectory: Sendable {
    /// The directory's absolute path.
    public let path: String

    /// Creates the directory.
    public init(_ purpose: String) throws {
        path = NSTemporaryDirectory() + "appshell-\(purpose)-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    /// The path of `name` inside the directory (not created).
    public func path(_ name: String) -> String { path + "/" + name }

    /// Deletes the directory and everything in it; does nothing when it is gone already.
    public func remove() { try? FileManager.default.removeItem(atPath: path) }
}
