import AppShell
import Testing

/// The weather service of `RootController.awaiting`'s example: Sendable, awaited off the lock.
struct WeatherService: Sendable {
    func forecast(for city: String) async throws -> String { "sunny in \(city)" }
}

enum WeatherAction: String, ScreenActions {
    case refresh
}

final class WeatherScreen: Screen<WeatherAction> {
    var city = "Kyoto"
    var forecast = ""
    init() { super.init(name: "weather") }
}

/// `RootController.awaiting`'s documented example, compiled as written (Swift 6 mode: `work`
/// may not capture the coordinator).
final class WeatherCoordinator: Coordinator {
    let root: RootController
    let screen = WeatherScreen()
    let weather = WeatherService()

    init(root: RootController) {
        self.root = root
        super.init(name: "weather")
        handle(WeatherAction.self) { [unowned self] action, request throws(ActionError) in
            switch action {
            case .refresh:
                let city = screen.city  // read under the lock: `work` sees no controller
                try root.awaiting { [weather] in  // a Sendable service of the app's, not `self`
                    try await weather.forecast(for: city)  // off the lock; honours cancellation
                } then: { root, forecast throws(ActionError) in
                    // Under the lock again; other requests of the session may have run meanwhile.
                    guard let screen = root.visibleScreen as? WeatherScreen else {
                        throw ActionError(status: 409, "The weather screen was left; nothing was done.")
                    }
                    screen.forecast = forecast
                }
            }
        }
    }
}

@Suite struct AwaitingExampleTests {
    /// Outside a request an action cannot await work: the call refuses it (503), and nothing is
    /// handed off.
    @Test func outsideARequestTheExampleIsRefused() throws {
        let root = RootController(initial: WeatherScreen(), defaults: DefaultsStore())
        let coordinator = WeatherCoordinator(root: root)
        #expect(throws: ActionError.self) {
            try root.awaiting {
                "x"
            } then: { _, _ throws(ActionError) in
            }
        }
        withExtendedLifetime(coordinator) {}
    }
}
