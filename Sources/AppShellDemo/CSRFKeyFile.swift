import AppShellAuth
import AppShellSessions
import Foundation

/// The key that signs the forms' tokens, kept in a file beside the SQLite store so that pages
/// opened before a restart still work after it.
enum CSRFKeyFile {
    /// Reads `csrf.key` in the folder of `storePath`, creating it (readable by the owner only) when
    /// missing. A file of the wrong size stops the start rather than being replaced.
    static func load(besides storePath: String) throws(StoreError) -> [UInt8] {
        let directory = (storePath as NSString).deletingLastPathComponent
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
            throw StoreError("\(path): cannot create its folder: \(error.localizedDescription)")
        }
        guard FileManager.default.createFile(atPath: path, contents: Data(key), attributes: [.posixPermissions: 0o600])
        else { throw StoreError("\(path): cannot be written") }
        return key
    }
}
