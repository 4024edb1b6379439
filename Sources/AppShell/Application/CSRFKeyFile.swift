import AppShellAuth
import AppShellSessions
import FoundationEssentials
import Glibc

/// The key that signs the forms' tokens, kept in a file beside the SQLite store so that pages
/// opened before a restart still work after it.
enum CSRFKeyFile {
    /// Reads `csrf.key` in the folder of `storePath`, creating it (readable by the owner only) when
    /// missing. A file of the wrong size stops the start rather than being replaced.
    static func load(besides storePath: String) throws(StoreError) -> [UInt8] {
        let directory = folder(of: storePath)
        let path = (directory.isEmpty ? "." : directory) + "/csrf.key"
        if let data = FileManager.default.contents(atPath: path) {
            guard data.count == CSRFTokens.keyLength else {
                throw StoreError("\(path): holds \(data.count) bytes, not a \(CSRFTokens.keyLength)-byte key")
            }
            return Array(data)
        }
        let key = CSRFTokens.randomKey()
        do {
            try FileManager.default.createDirectory(
                atPath: directory.isEmpty ? "." : directory, withIntermediateDirectories: true)
        } catch {
            throw StoreError("\(path): cannot create its folder: \(reason(error))")
        }
        guard FileManager.default.createFile(atPath: path, contents: Data(key), attributes: [.posixPermissions: 0o600])
        else { throw StoreError("\(path): cannot be written") }
        return key
    }

    /// The folder part of `path` ("" for a bare file name), as `NSString.deletingLastPathComponent`
    /// gives it: "/data" for "/data/appshell.sqlite", "/" for "/appshell.sqlite".
    static func folder(of path: String) -> String {
        var path = Substring(path)
        while path.count > 1 && path.hasSuffix("/") { path.removeLast() }
        guard let slash = path.lastIndex(of: "/") else { return "" }
        var folder = path[...slash]
        while folder.count > 1 && folder.hasSuffix("/") { folder.removeLast() }
        return String(folder)
    }

    /// Why a file operation failed, as the system says it ("Permission denied").
    private static func reason(_ error: any Error) -> String {
        if let error = error as? CocoaError, let underlying = error.underlying as? POSIXError {
            return String(cString: strerror(underlying.code.rawValue))
        }
        return "\(error)"
    }
}
