import Foundation
import Testing

@testable import AppShellSessions

/// Values are bound to a statement without a copy (`SQLiteStatement.withBound`): each value's
/// bytes are borrowed while the statement runs, and it is reset before the borrow ends.
@Suite struct SQLiteStatementTests {
    static let table: StaticString = "CREATE TABLE t (k INTEGER PRIMARY KEY, b BLOB, s TEXT, i BLOB)"
    static let insert: StaticString = "INSERT INTO t (k, b, s, i) VALUES (?1, ?2, ?3, ?4)"
    static let select: StaticString = "SELECT k, b, s, i FROM t WHERE b = ?1 AND s = ?2 ORDER BY k"

    @Test func everyKindOfValueIsStoredAsBound() throws {
        try BackendTestDirectory.with { directory throws in
            let connection = try SQLiteConnection(path: directory.path + "/values.sqlite")
            try connection.execute(Self.table.description)
            let id = SessionID.random()
            let blob: [UInt8] = [0, 1, 2, 255]
            let text = Array("héllo, ✓".utf8)
            #expect(try connection.run(Self.insert, .integer(1), .blob(blob), .text(text), .storeKey(id)) == 1)
            #expect(try connection.run(Self.insert, .integer(2), .blob([]), .text([]), .null) == 1)
            let rows = try connection.query(
                "SELECT k, b, s, i, typeof(b), typeof(s), typeof(i) FROM t ORDER BY k"
            ) { row in
                (
                    row.int64(at: 0), row.blob(at: 1), row.string(at: 2), row.blob(at: 3), row.string(at: 4),
                    row.string(at: 5), row.string(at: 6)
                )
            }
            #expect(rows.count == 2)
            #expect(
                rows[0].0 == 1 && rows[0].1 == [0, 1, 2, 255] && rows[0].2 == "héllo, ✓"
                    && rows[0].3 == id.storeKey.bytes)
            // Empty bytes stay an empty blob and an empty string, not NULL.
            #expect(rows[1].1 == [] && rows[1].2 == "" && rows[1].4 == "blob" && rows[1].5 == "text")
            #expect(rows[1].6 == "null")
            // Bound values are read while the rows are stepped through.
            let found = try connection.query(Self.select, .blob([0, 1, 2, 255]), .text(Array("héllo, ✓".utf8))) {
                $0.int64(at: 0)
            }
            #expect(found == [1])
        }
    }

    /// A value that cannot be bound (a parameter the statement does not have) throws, and the
    /// statement is reset: it runs again, with the values bound then.
    @Test func aFailedBindLeavesTheStatementReady() throws {
        try BackendTestDirectory.with { directory throws in
            let connection = try SQLiteConnection(path: directory.path + "/values.sqlite")
            try connection.execute(Self.table.description)
            #expect(throws: StoreError.self) {
                try connection.run(
                    Self.insert, .integer(1), .blob([1]), .text([UInt8(ascii: "a")]), .null, .blob([5]))
            }
            #expect(try connection.run(Self.insert, .integer(1), .blob([1]), .text([UInt8(ascii: "a")]), .null) == 1)
            #expect(try connection.query("SELECT count(*) FROM t") { $0.int64(at: 0) } == [1])
        }
    }
}
