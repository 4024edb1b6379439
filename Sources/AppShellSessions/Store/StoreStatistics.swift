import AppShellConcurrency

/// The counters of a `StoreWriter`: how many writes it committed, in how many transactions
/// (batches), how many writes each batch held, the batches that failed and how long commits took.
/// Read them with `snapshot`; `/metrics` renders `Snapshot.prometheusText`.
package final class StoreStatistics: Sendable {
    /// The upper bounds of the commit-latency buckets, in seconds (the last bucket is unbounded).
    package static let latencyBounds: [Double] = [0.000_5, 0.001, 0.002_5, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1]
    /// The upper bounds of the writes-per-batch buckets (the last bucket is unbounded).
    package static let batchSizeBounds: [Int] = [1, 2, 4, 8, 16, 32, 64, 128, 256, 1024]

    /// The counters at one moment.
    package struct Snapshot: Sendable, Equatable {
        /// Requests' writes committed (each request that changed something counts once).
        package var commits = 0
        /// Transactions committed, each holding the writes of one or more requests.
        package var batches = 0
        /// Transactions that failed (every write in them was refused and its request answered 503).
        package var commitErrors = 0
        /// Writes whose transaction failed.
        package var failedWrites = 0
        /// In a store shared by several instances: requests' writes refused because another
        /// instance changed their session meanwhile (each request then runs again, up to
        /// `SessionRegistry.conflictRetries` times). Not counted in `commits` nor as errors.
        package var conflicts = 0
        /// Batches by size: `batchSizes[i]` counts those with at most `batchSizeBounds[i]` writes
        /// and more than the bound before; the last entry those larger than every bound.
        package var batchSizes = [Int](repeating: 0, count: StoreStatistics.batchSizeBounds.count + 1)
        /// Transactions (committed or failed) by duration, bucketed as `batchSizes` is, over
        /// `latencyBounds`.
        package var latencies = [Int](repeating: 0, count: StoreStatistics.latencyBounds.count + 1)
        /// The durations of every transaction, added up, in seconds.
        package var latencySum = 0.0
        /// The largest batch so far.
        package var largestBatch = 0

        /// All counters at zero.
        package init() {}

        /// The counters in the Prometheus text format, each name starting with `prefix`.
        package func prometheusText(prefix: String = "appshell_store") -> String {
            var text = ""
            func counter(_ name: String, _ help: String, _ value: Int) {
                text += "# HELP \(prefix)_\(name) \(help)\n# TYPE \(prefix)_\(name) counter\n"
                text += "\(prefix)_\(name) \(value)\n"
            }
            counter("commits_total", "Requests' writes committed by the store writer.", commits)
            counter("batches_total", "Transactions committed by the store writer (group commits).", batches)
            counter("commit_errors_total", "Store transactions that failed (their requests got 503).", commitErrors)
            counter(
                "conflicts_total",
                "Requests' writes refused because another instance changed their session meanwhile (run again).",
                conflicts)
            func histogram(_ name: String, _ help: String, _ bounds: [String], _ counts: [Int], sum: String) {
                text += "# HELP \(prefix)_\(name) \(help)\n# TYPE \(prefix)_\(name) histogram\n"
                var cumulative = 0
                for (bound, count) in zip(bounds + ["+Inf"], counts) {
                    cumulative += count
                    text += "\(prefix)_\(name)_bucket{le=\"\(bound)\"} \(cumulative)\n"
                }
                text += "\(prefix)_\(name)_sum \(sum)\n\(prefix)_\(name)_count \(cumulative)\n"
            }
            histogram(
                "batch_writes", "Requests' writes per store transaction.",
                StoreStatistics.batchSizeBounds.map(String.init),
                batchSizes, sum: String(commits + failedWrites))
            histogram(
                "commit_seconds", "How long store transactions took.",
                StoreStatistics.latencyBounds.map { "\($0)" }, latencies, sum: "\(latencySum)")
            return text
        }
    }

    private let counters = Locked(Snapshot())

    /// No commits yet.
    package init() {}

    /// The counters now.
    package var snapshot: Snapshot { counters.withLock { $0 } }

    /// Counts one transaction of `writes` requests' writes that took `seconds` and `failed` or
    /// not; `conflicts` of them were refused as conflicts (the others committed).
    func record(writes: Int, conflicts: Int = 0, seconds: Double, failed: Bool) {
        counters.withLock { counters in
            counters.conflicts += conflicts
            if failed {
                counters.commitErrors += 1
                counters.failedWrites += writes
            } else {
                counters.batches += 1
                counters.commits += writes - conflicts
            }
            counters.batchSizes[
                StoreStatistics.batchSizeBounds.firstIndex { writes <= $0 } ?? StoreStatistics.batchSizeBounds.count] +=
                1
            counters.latencies[
                StoreStatistics.latencyBounds.firstIndex { seconds <= $0 } ?? StoreStatistics.latencyBounds.count] += 1
            counters.latencySum += seconds
            counters.largestBatch = max(counters.largestBatch, writes)
        }
    }
}
