// Route auth: one bearer key from EVE_TEST_KEY (default "eve-test-key").
// Anything else falls through the walk and gets eve's own 401. The key is
// read per request so the built server honours the environment it starts in.
import { extractBearerToken, withAuthChallenges } from "eve/channels/auth";
import { eveChannel } from "eve/channels/eve";

const testKey = withAuthChallenges(
  (request: Request) => {
    const expected = process.env.EVE_TEST_KEY || "eve-test-key";
    const token = extractBearerToken(request.headers.get("authorization"));
    if (token !== expected) return null;
    return {
      attributes: {},
      authenticator: "casebook-test-key",
      principalId: "casebook",
      principalType: "service",
    };
  },
  [{ scheme: "Bearer" }],
);

export default eveChannel({ auth: [testKey] });
