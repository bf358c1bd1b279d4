// A real OpenID Connect provider for calibrate's team-mode sign-in test (node-oidc-provider).
// Usage: node server.js PORT CLIENT_ID CLIENT_SECRET REDIRECT_URI
// Its development login form lets any login name in; the name is the account's subject and
// its (verified) e-mail address, so a test signs in as whoever it needs to be.
import { createServer } from "node:http";
import Provider from "oidc-provider";

const [port, clientId, clientSecret, redirectUri] = process.argv.slice(2);
const issuer = `http://127.0.0.1:${port}`;

const provider = new Provider(issuer, {
  clients: [{
    client_id: clientId,
    client_secret: clientSecret,
    redirect_uris: [redirectUri],
    post_logout_redirect_uris: [redirectUri],
    grant_types: ["authorization_code"],
    response_types: ["code"],
  }],
  claims: { openid: ["sub"], email: ["email", "email_verified"], profile: ["name"] },
  findAccount: async (ctx, id) => ({
    accountId: id,
    async claims() { return { sub: id, email: id, email_verified: true, name: id }; },
  }),
  features: { devInteractions: { enabled: true } },
  // Put the e-mail claims in the ID token, as Google, Entra and Okta do (st.user reads it).
  conformIdTokenClaims: false,
  cookies: { keys: ["calibrate-test-only"] },
});
provider.proxy = false;

createServer(provider.callback()).listen(Number(port), "127.0.0.1", () => {
  console.log(`oidc provider ready at ${issuer}`);
});
