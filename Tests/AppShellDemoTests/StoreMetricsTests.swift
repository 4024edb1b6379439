import AppShell
import AppShellDemo
import AppShellTesting
import Foundation
import Testing

/// `/metrics` shows the SQLite store writer's counters (and nothing of them for the memory store).
@Suite struct StoreMetricsTests {
    static func start(_ store: ShellConfiguration.StoreKind, directory: String) throws -> (DemoServer, LiveServer) {
        var configuration = try DemoConfiguration.load(
            path: CommandTests.packageRoot.appendingPathComponent("config.json").path, required: true,
            environment: [:])
        configuration.store = store
        configuration.storePath = directory + "/sessions.sqlite"
        configuration.splashDelayMilliseconds = 0
        configuration.publicDirectory = CommandTests.packageRoot.appendingPathComponent("Public").path
        let app = try DemoServer(configuration: configuration)
        return (app, try LiveServer(responder: try app.makeResponder()))
    }

    @Test func theWritersCountersAreShownForSQLite() throws {
        let directory = NSTemporaryDirectory() + "appshell-metrics-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let (app, live) = try Self.start(.sqlite, directory: directory)
        defer {
            _ = live.stop()
            app.sessions.stopWriter()
        }
        #expect(app.sessions.writer?.queueLimit == app.configuration.storeWriteQueue)
        let client = live.client()
        _ = try client.get("/api/state")
        #expect(try ShellAPITests.login(client).status == 200)
        #expect(try ShellAPITests.act(client, "showList").status == 200)
        let metrics = try live.client().get("/metrics").text
        let commits = metrics.split(separator: "\n").first { $0.hasPrefix("appshell_store_commits_total ") }
        #expect(Int(commits?.split(separator: " ").last ?? "") ?? 0 >= 2, "\(metrics)")
        #expect(metrics.contains("appshell_store_commit_errors_total 0\n"))
        // One instance: nothing else changes its sessions.
        #expect(metrics.contains("appshell_store_conflicts_total 0\n"))
        #expect(metrics.contains("# TYPE appshell_store_commit_seconds histogram\n"))
        #expect(metrics.contains("appshell_store_batch_writes_bucket{le=\"+Inf\"}"))
        #expect(metrics.contains("appshell_store_writes_queued 0\n"))
    }

    @Test func theMemoryStoreHasNoWriter() throws {
        let (app, live) = try Self.start(.memory, directory: NSTemporaryDirectory())
        defer { _ = live.stop() }
        #expect(app.sessions.writer == nil)
        #expect(!(try live.client().get("/metrics").text.contains("appshell_store_")))
    }
}
