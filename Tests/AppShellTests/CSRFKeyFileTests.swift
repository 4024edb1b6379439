import AppShellSessions
import Foundation
import Testing

@testable import AppShell

/// The form-token key file beside the store: made once (owner-only), read back after, refused
/// when it is not a key; its folder found as `NSString` finds it.
@Suite struct CSRFKeyFileTests {
    @Test(arguments: [
        "/data/appshell.sqlite", "data/appshell.sqlite", "appshell.sqlite", "/appshell.sqlite", "/", "",
        "/data/", "a/b//c.sqlite", "//store.sqlite", "./store.sqlite",
    ])
    func theFolderIsWhatNSStringGives(path: String) {
        #expect(CSRFKeyFile.folder(of: path) == (path as NSString).deletingLastPathComponent)
    }

    @Test func aKeyIsMadeOwnerOnlyInANewFolderAndReadBack() throws {
        let folder = NSTemporaryDirectory() + "appshell-csrf-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let storePath = folder + "/nested/store.sqlite"
        let made = try CSRFKeyFile.load(besides: storePath)
        let attributes = try FileManager.default.attributesOfItem(atPath: folder + "/nested/csrf.key")
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
        #expect(try CSRFKeyFile.load(besides: storePath) == made)
    }

    @Test func aFileOfTheWrongSizeIsRefused() throws {
        let folder = NSTemporaryDirectory() + "appshell-csrf-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        #expect(FileManager.default.createFile(atPath: folder + "/csrf.key", contents: Data([1, 2, 3])))
        #expect(throws: StoreError.self) { try CSRFKeyFile.load(besides: folder + "/store.sqlite") }
    }

    @Test func aFolderThatCannotBeMadeIsNamedWithTheSystemsReason() throws {
        let file = NSTemporaryDirectory() + "appshell-csrf-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: file) }
        #expect(FileManager.default.createFile(atPath: file, contents: Data()))
        // A folder inside a plain file cannot be made.
        let error = #expect(throws: StoreError.self) { try CSRFKeyFile.load(besides: file + "/sub/store.sqlite") }
        #expect(error?.description == "\(file)/sub/csrf.key: cannot create its folder: Not a directory")
    }
}
