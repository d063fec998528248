import Foundation

/// How long the push service keeps an end for a phone that is offline (SPEC 12.2), on every end path: an Android
/// end's `android.ttl`, an end broadcast's `apns-expiration`. An end is never dropped before the stale date of the
/// countdown it ends: a phone back online before its countdown went stale still gets the end.
public enum EndExpiry {
    /// Epoch seconds until which an end sent at `now` is kept: the later of its dismissal date (`now` +
    /// `END_DISMISS_AFTER_SECONDS`) and the stale date of the countdown it ends (`shownStart`, the latest planned start
    /// that countdown may show, + `EXPIRE_AFTER_SECONDS`). `lastsUntil`: the latest moment the countdown itself can
    /// live (iOS ends a Live Activity 8 hours after its start), past which no stale date counts.
    public static func epochSeconds(now: Date, dismissAfterSeconds: Int, shownStart: Date, expireAfterSeconds: Int, lastsUntil: Date? = nil) -> Int {
        var stale = PushPayloadBuilder.epochSeconds(shownStart) + expireAfterSeconds
        if let lastsUntil { stale = min(stale, PushPayloadBuilder.epochSeconds(lastsUntil)) }
        return max(PushPayloadBuilder.epochSeconds(now) + dismissAfterSeconds, stale)
    }
}
