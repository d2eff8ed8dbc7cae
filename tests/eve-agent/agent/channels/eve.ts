import { extractBearerToken, withAuthChallenges } from "eve/channels/auth";
import { eveChannel, type EveAuthFn } from "eve/channels/eve";

// One shared test key, read when the server starts. Any other (or no) bearer skips this
// entry, and since it is the only entry eve answers 401 itself: the refusal tests see
// eve's own body and WWW-Authenticate header, not ours.
const key = process.env.EVE_TEST_KEY || "eve-test-key";

const testKey: EveAuthFn = withAuthChallenges(
  (request) =>
    extractBearerToken(request.headers.get("authorization")) === key
      ? {
          authenticator: "test-key",
          principalId: "casebook-test",
          principalType: "user",
          attributes: {},
          // Casebook reads GET /eve/v1/info with the same key it uses for sessions.
          allowAgentInfo: true,
        }
      : null,
  [{ scheme: "Bearer" }],
);

export default eveChannel({ auth: [testKey] });
