import AppShellHTTP
import AppShellJSON

/// The demo application: its routes, with static files from the public directory behind them.
public struct DemoApp: Sendable {
    /// The configuration the app was built from.
    public let configuration: AppConfiguration

    /// An app for `configuration`.
    public init(configuration: AppConfiguration) {
        self.configuration = configuration
    }

    /// The responder for every request: the routes first, static files for any other path.
    /// Throws when the public directory does not exist.
    public func makeResponder() throws(HTTPServerError) -> any HTTPResponder {
        let files = try StaticFiles(
            directory: configuration.publicDirectory, maxAge: configuration.staticMaxAgeSeconds)
        var router = Router(fallback: files)
        let healthy = JSON.object(["status": "ok"]).serialized
        router.get("/healthz") { _ in .json(bytes: healthy) }
        return router
    }
}
