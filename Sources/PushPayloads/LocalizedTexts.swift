/// Every user-visible text of the payloads, per language.
struct LocalizedTexts: Sendable {
    /// Shown instead of an empty stream title.
    var untitledStream: String
    /// `statusText` and `subtitle` while counting down.
    var countdownStatus: String
    var countdownSubtitle: String
    /// The start push's alert title.
    var startAlertTitle: String
    /// The reminder notification's title.
    var reminderTitle: String
    /// "<title> starts in N minutes".
    var startsIn: @Sendable (_ title: String, _ minutes: Int) -> String
    /// "<title> is starting now", when the planned start has come.
    var startingNow: @Sendable (_ title: String) -> String
    /// `statusText` of an ended activity.
    var endStatus: @Sendable (EndReason) -> String
    /// `subtitle` of an ended activity.
    var endSubtitle: @Sendable (EndReason) -> String

    static func of(_ language: PayloadLanguage) -> LocalizedTexts {
        switch language {
        case .tr: turkish
        case .en: english
        }
    }

    static let turkish = LocalizedTexts(
        untitledStream: "Canlı yayın",
        countdownStatus: "Yayına kalan süre",
        countdownSubtitle: "Yayına katılmak için dokun",
        startAlertTitle: "Yayının yaklaşıyor",
        reminderTitle: "Yayın hatırlatması",
        startsIn: { title, minutes in "\(title) \(minutes) dakika sonra başlıyor" },
        startingNow: { title in "\(title) şimdi başlıyor" },
        endStatus: { reason in
            switch reason {
            case .ready: "Yayın hazır"
            case .started: "Yayın başladı"
            case .cancelled: "Yayın iptal edildi"
            case .expired: "Yayın başlamadı"
            }
        },
        endSubtitle: { reason in reason.opensStream ? "Yayına katılmak için dokun" : "Ana sayfaya dönmek için dokun" }
    )

    static let english = LocalizedTexts(
        untitledStream: "Live stream",
        countdownStatus: "Starts in",
        countdownSubtitle: "Tap to join the stream",
        startAlertTitle: "Your stream is coming up",
        reminderTitle: "Stream reminder",
        startsIn: { title, minutes in "\(title) starts in \(minutes) \(minutes == 1 ? "minute" : "minutes")" },
        startingNow: { title in "\(title) is starting now" },
        endStatus: { reason in
            switch reason {
            case .ready: "The stream is ready"
            case .started: "The stream has started"
            case .cancelled: "The stream was cancelled"
            case .expired: "The stream did not start"
            }
        },
        endSubtitle: { reason in reason.opensStream ? "Tap to join the stream" : "Tap to go to the home page" }
    )

    /// The alert / reminder body for a stream planned `minutesLeft` minutes from now (nil: starting now).
    func countdownSentence(title: String, minutesLeft: Int?) -> String {
        minutesLeft.map { startsIn(title, $0) } ?? startingNow(title)
    }
}
