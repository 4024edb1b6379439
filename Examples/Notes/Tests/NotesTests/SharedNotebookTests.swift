import AppShell
import AppShellJSON
import AppShellTesting
import Foundation
import Testing

/// A user's notes live in the user's store: every browser logged in as the user sees the same
/// notes, a note saved in one shows in the others' open pages without a reload, two browsers
/// saving at once lose nothing, and the store's byte limit refuses clearly.
@Suite struct SharedNotebookTests {
    /// The titles of the notes in a state.
    static func titles(_ state: JSON) -> [String] {
        state["userDefaults"]?["notes"]?.arrayValue?.compactMap { $0["title"]?.stringValue } ?? []
    }

    /// Presents the compose sheet and saves a note titled `title`.
    static func save(_ client: any HTTPTestClient, _ title: String) throws -> TestResponse {
        _ = try client.act(#"{"action": "compose"}"#)
        return try client.act("save", ["title": .string(title), "body": "written in one browser"])
    }

    @Test(arguments: TestMode.allCases)
    func aNoteSavedInOneBrowserIsInEveryOther(mode: TestMode) throws {
        let notes = try NotesHarness(mode)
        try notes.logIn()
        let phone = notes.server.client()
        #expect(try phone.logIn(username: "demo", password: "notes").status == 200)
        #expect(Self.titles(try phone.state()) == ["Welcome to Notes"])
        #expect(try Self.save(notes, "Groceries").status == 200)
        // The other browser's next read shows it, and its page too.
        #expect(Self.titles(try phone.state()) == ["Groceries", "Welcome to Notes"])
        #expect(try phone.page("/notes").text.contains("Groceries"))
        // Logged out and in again in a third browser: still there, one welcome note only.
        _ = try phone.act(#"{"action": "logout"}"#)
        let laptop = notes.server.client()
        let again = try laptop.logIn(username: "demo", password: "notes")
        #expect(Self.titles(again.json) == ["Groceries", "Welcome to Notes"])
        #expect(try laptop.page("/notes/2").text.contains("written in one browser"))
    }

    @Test func anOpenPageOfAnotherBrowserShowsTheNoteWithoutAReload() throws {
        let notes = try NotesHarness(.live)
        try notes.logIn()
        let phone = notes.server.client()
        _ = try phone.logIn(username: "demo", password: "notes")
        let port = try #require(notes.server.port)
        let cookie = try #require(phone.cookies.map { "\($0.key)=\($0.value)" }.first)
        let stream = try RawConnection(port: port)
        try stream.send("GET /api/events HTTP/1.1\r\nHost: localhost\r\nCookie: \(cookie)\r\n\r\n")
        #expect(try stream.read(through: "\r\n\r\n").hasPrefix("HTTP/1.1 200"))
        #expect(try stream.read(through: "}\n\n").contains("Welcome to Notes"))
        #expect(try Self.save(notes, "Seen elsewhere").status == 200)
        // The phone's open page gets its state again, rendered with the new note.
        let event = try stream.read(through: "}\n\n")
        #expect(event.contains("event: state"))
        #expect(event.contains("Seen elsewhere"))
    }

    @Test(arguments: TestMode.allCases)
    func twoBrowsersSavingAtOnceLoseNothing(mode: TestMode) throws {
        let notes = try NotesHarness(mode)
        try notes.logIn()
        let other = notes.server.client()
        _ = try other.logIn(username: "demo", password: "notes")
        let perBrowser = 12
        let failures = Locked<[String]>([])
        DispatchQueue.concurrentPerform(iterations: 2) { browser in
            let client: any HTTPTestClient = browser == 0 ? notes : other
            for index in 0..<perBrowser {
                do {
                    let saved = try Self.save(client, "browser \(browser) note \(index)")
                    if saved.status != 200 { failures.withLock { $0.append("\(saved.status) \(saved.text)") } }
                } catch {
                    failures.withLock { $0.append("\(error)") }
                }
            }
        }
        #expect(failures.withLock { $0 } == [])
        let state = try notes.state()
        let titles = Self.titles(state)
        #expect(titles.count == 2 * perBrowser + 1)
        #expect(Set(titles).count == titles.count)
        let ids = state["userDefaults"]?["notes"]?.arrayValue?.compactMap { $0["id"]?.integerValue } ?? []
        #expect(Set(ids).count == ids.count)
    }

    @Test func aChangePastTheUsersStoreLimitIsRefusedAndNothingIsKept() throws {
        let notes = try NotesHarness(.inProcess) { $0.shell.accounts.maxUserStoreBytes = 2048 }
        try notes.logIn()
        _ = try notes.act(#"{"action": "compose"}"#)
        let long = String(repeating: "x", count: 1900)
        let refused = try notes.act("save", ["title": "Too much", "body": .string(long)])
        #expect(refused.status == 413)
        #expect(refused.json["error"]?.stringValue?.hasPrefix("The user's store holds at most 2048 bytes") == true)
        let after = try notes.state()
        #expect(Self.titles(after) == ["Welcome to Notes"], "\(after)")
    }
}
