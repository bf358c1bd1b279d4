"""The hand-written content of the demo: a fictional help centre and the question templates.

Bramblepost is a made-up team-wiki product, invented for this demo; any resemblance to a real
product is accidental. Every fact below is checkable against the page text, so a reviewer can
verify each answer template by reading two paragraphs.

:mod:`judges.demo.generate` turns these templates into rows with a seeded random generator. The
rules the templates follow, so the ground truth written into each row's metadata is right:

* ``correct`` answers make only claims found in the passages listed in ``needs``.
* ``unsupported`` answers add at least one claim that no passage of the help centre makes.
* ``dropped`` answers leave out a condition the ``needs`` passages attach to the fact.
* ``contradiction`` answers state something a ``needs`` passage says is not so.
* ``also`` lists other passages that would answer the question too; a "retrieval missed the
  page" row never gets them.
* Unanswerable templates list in ``near`` the passages a retriever would plausibly return; none
  of them answers the question.
"""

from __future__ import annotations

from dataclasses import dataclass

PRODUCT = "Bramblepost"

SEGMENTS = ("lookup", "multi_page", "identifier", "negation", "unanswerable")

FAILURE_MODES = (
    "correct",
    "correct_refusal",
    "unsupported_claim",
    "dropped_condition",
    "contradiction",
    "wrong_refusal",
    "answered_without_source",
)


@dataclass(frozen=True)
class Page:
    """One help-centre article: an id, a title and a few short paragraphs (the passages)."""

    page_id: str
    title: str
    paragraphs: tuple[str, ...]


@dataclass(frozen=True)
class Spec:
    """A question template with its reference answer and answers for each failure mode.

    Variants with a note are ``(answer, note)`` pairs; the note is what an expert writes when
    failing that answer.
    """

    key: str
    segment: str
    doc: str
    questions: tuple[str, ...]
    reference: str
    topic: str
    needs: tuple[str, ...] = ()
    correct: tuple[str, ...] = ()
    unsupported: tuple[tuple[str, str], ...] = ()
    dropped: tuple[tuple[str, str], ...] = ()
    contradiction: tuple[tuple[str, str], ...] = ()
    also: tuple[str, ...] = ()
    near: tuple[str, ...] = ()


PAGES: tuple[Page, ...] = (
    Page("plans", "Plans and pricing", (
        "Bramblepost has four plans: Free, Team, Pro and Enterprise. Prices are per seat per "
        "month. Team costs $8 per seat billed annually or $10 per seat billed monthly. Pro costs "
        "$15 per seat billed annually or $18 per seat billed monthly. Enterprise is priced by "
        "quote and requires a minimum of 100 seats.",
        "The Free plan is for up to 3 members and includes 1 GB of storage in total. It has no "
        "API access and no guests, and it keeps page history for 7 days.",
        "Team and Pro require at least 3 paid seats.",
        "You can change plans at any time from Settings → Billing. Upgrades take effect "
        "immediately and are prorated; downgrades take effect at the end of the current "
        "billing period.",
    )),
    Page("sso", "Single sign-on (SAML)", (
        "Bramblepost supports SAML 2.0 single sign-on (SSO) on the Pro and Enterprise plans. "
        "SSO is not available on Free or Team.",
        "On Pro, SSO is available to workspaces with 50 or more paid seats. Pro workspaces with "
        "fewer than 50 paid seats need the Security add-on to turn on SSO. Every Enterprise "
        "workspace includes SSO.",
        "Tested identity providers are Okta, Microsoft Entra ID, Google Workspace and OneLogin; "
        "any SAML 2.0 identity provider should work. Only the workspace owner and admins can "
        "configure SSO, under Settings → Security → Single sign-on.",
        "When SSO is enforced, members sign in only through the identity provider; the "
        "workspace owner keeps a password login as a break-glass account. SCIM user "
        "provisioning is available on Enterprise only.",
    )),
    Page("security-addon", "The Security add-on", (
        "The Security add-on costs $4 per seat per month and is billed for every paid seat in "
        "the workspace. It can be added to Pro workspaces only; Enterprise includes all of its "
        "features.",
        "The add-on includes SSO for Pro workspaces with fewer than 50 paid seats, IP "
        "allowlisting (up to 50 address ranges), custom session timeouts between 15 minutes "
        "and 30 days, and streaming of the audit log to a SIEM.",
        "The add-on is not available on Free or Team. To add it, the workspace owner goes to "
        "Settings → Billing → Add-ons. Removing the add-on takes effect at the end of the "
        "billing period.",
    )),
    Page("seats", "Seats and members", (
        "Every member of a workspace uses a paid seat; guests do not. Adding a seat in the "
        "middle of a term is charged immediately for the rest of the term (prorated). Removing "
        "a member frees the seat, but the seat count on your bill goes down only at the next "
        "renewal.",
        "Owners and admins can add seats. Only the owner can lower the seat count, in "
        "Settings → Billing → Seats.",
        "Deactivated members do not use a seat. Their pages stay in the workspace and remain "
        "editable by others.",
    )),
    Page("guests", "Guests", (
        "Guests are people outside your company who can view or edit the specific pages they "
        "are invited to. Guests are free and do not use a seat.",
        "Team workspaces can invite up to 2 guests per paid seat; Pro and Enterprise "
        "workspaces can invite up to 5 guests per paid seat. The Free plan does not allow "
        "guests.",
        "Guests cannot create spaces, cannot see the member directory and cannot use the API. "
        "A guest invited to several pages still counts as one guest.",
    )),
    Page("billing", "Billing and payment methods", (
        "Bramblepost accepts Visa, Mastercard and American Express cards. Annual plans that "
        "total $3,000 or more per year can also be paid by invoice with bank transfer; invoices "
        "are due within 30 days.",
        "If a card payment fails, we retry it 3 times over 10 days and email the workspace "
        "owner each time. If the last retry fails, the workspace becomes read-only until the "
        "balance is paid. No content is deleted.",
        "Prices exclude VAT and sales tax. EU business customers with a valid VAT number are "
        "not charged VAT (reverse charge). Invoices can be downloaded as PDF from "
        "Settings → Billing → Invoices.",
    )),
    Page("refunds", "Cancellations and refunds", (
        "Monthly plans can be cancelled at any time and stay active until the end of the paid "
        "month. Partial months are not refunded.",
        "Annual plans cancelled within the first 30 days of the term get a prorated refund. "
        "After 30 days, an annual plan stays active until the end of the term and is not "
        "refunded.",
        "Cancelling moves the workspace to the Free plan at the end of the term. If the "
        "workspace then has more than 3 members, it becomes read-only until members are "
        "removed or a paid plan is chosen.",
    )),
    Page("data-retention", "Data retention", (
        "Deleted pages stay in the trash for 30 days on paid plans and 7 days on Free. Until "
        "then, any editor of the page can restore it; after that it is deleted permanently.",
        "Page version history is kept for 7 days on Free, 90 days on Team, 1 year on Pro and "
        "for the lifetime of the workspace on Enterprise.",
        "When a workspace is closed, its content is deleted 60 days later. Encrypted backups "
        "are kept for 35 days; they exist for disaster recovery only and are not used to "
        "restore individual pages or workspaces.",
        "Enterprise workspaces can set a retention policy that deletes pages older than a "
        "chosen age, anywhere from 90 days to 10 years.",
    )),
    Page("error-codes", "Error codes", (
        "BP-401: your session expired; sign in again. On SSO workspaces, sessions last 12 hours "
        "unless the Security add-on sets a custom session timeout.",
        "BP-403: you do not have permission for this page or action; ask the page owner or a "
        "workspace admin for access. BP-404: the page was deleted, or moved to a space you "
        "cannot see.",
        "BP-409: edit conflict. Someone saved the page while you were editing it. Bramblepost "
        "keeps both versions; choose one in the conflict dialog. BP-413: the file is too "
        "large. Uploads are limited to 250 MB per file on paid plans and 25 MB on Free.",
        "BP-429: too many requests; see API rate limits. BP-503: scheduled maintenance or an "
        "outage; check status.bramblepost.example for updates.",
    )),
    Page("api-rate-limits", "API access and rate limits", (
        "The REST API is available on Team, Pro and Enterprise; the Free plan has no API "
        "access. Requests are authenticated with personal access tokens or OAuth apps.",
        "Limits are per token: 100 requests per minute on Team, 600 on Pro and 1,200 on "
        "Enterprise. Each call to a search endpoint counts as 5 requests.",
        "Every response includes the headers X-RateLimit-Limit, X-RateLimit-Remaining and "
        "X-RateLimit-Reset. Over the limit, the API answers with HTTP 429, error code BP-429 "
        "and a Retry-After header giving the number of seconds to wait.",
        "Personal access tokens expire after 90 days. Admins on Enterprise can allow tokens "
        "that do not expire.",
    )),
    Page("exports", "Exporting content", (
        "Any member can export a page or a space as Markdown, HTML or PDF. A PDF export can "
        "contain at most 500 pages; export larger spaces as Markdown or HTML.",
        "A full workspace export, including attachments, can be started only by the workspace "
        "owner or an admin, at most once every 24 hours. The download link arrives by email.",
        "Export download links expire after 7 days. Exports do not include comments or page "
        "history; use the API to fetch those.",
    )),
    Page("audit-log", "Audit log", (
        "The audit log records sign-ins, permission changes, exports, member changes and the "
        "creation of API tokens. It is available on Pro and Enterprise.",
        "Audit events are kept for 180 days on Pro and 2 years on Enterprise. Admins can "
        "filter them and download them as CSV from Settings → Security → Audit log.",
        "Streaming the audit log to a SIEM (Splunk, Datadog or any HTTPS endpoint) requires "
        "the Security add-on on Pro, and is included on Enterprise.",
    )),
    Page("two-factor", "Two-factor authentication", (
        "Members can protect their account with an authenticator app (TOTP) or a hardware "
        "security key (WebAuthn / FIDO2). SMS codes are not supported.",
        "Admins on Team, Pro and Enterprise can require two-factor authentication for all "
        "members. Members who have not set it up are asked to at their next sign-in.",
        "Turning on two-factor authentication gives you 10 single-use recovery codes. If you "
        "lose both your device and your codes, a workspace admin can reset your two-factor "
        "setup; Bramblepost support cannot.",
        "Two-factor settings do not apply to SSO sign-ins; your identity provider handles "
        "those.",
    )),
    Page("storage", "Storage limits", (
        "Free workspaces have 1 GB of storage in total. Team includes 10 GB per paid seat and "
        "Pro includes 50 GB per paid seat, pooled across the workspace. Enterprise storage is "
        "unlimited.",
        "Attachments, images and export files count towards storage; page text does not. When "
        "a workspace reaches its limit, members can still edit pages but cannot upload new "
        "files.",
        "Extra storage can be bought on Team and Pro in blocks of 100 GB for $5 per month each.",
    )),
    Page("integrations", "Integrations", (
        "Bramblepost integrates with Slack, Microsoft Teams, GitHub and Jira. Slack and GitHub "
        "are available on Team, Pro and Enterprise; Microsoft Teams and Jira require Pro or "
        "Enterprise. The Free plan has no integrations.",
        "The Slack integration posts page updates to a channel and unfurls Bramblepost links. "
        "A link preview shows the page title and first 200 characters, and only to people who "
        "can see the page.",
        "Workspace admins install integrations from Settings → Integrations. Members can "
        "connect their own GitHub account without an admin.",
    )),
    Page("data-residency", "Data regions", (
        "Bramblepost stores workspace data in one of two regions: the EU (Frankfurt) or the US "
        "(Oregon). The region is chosen when the workspace is created and is shown in "
        "Settings → General.",
        "Moving an existing workspace to the other region is available on Enterprise only. A "
        "move takes up to 5 business days, and the workspace is read-only for up to 4 hours "
        "during the final copy.",
        "Backups stay in the same region as the workspace. Support staff can view workspace "
        "content only with an admin's written permission.",
    )),
    Page("uptime-sla", "Uptime and SLA", (
        "Enterprise plans include a 99.9% monthly uptime commitment. Free, Team and Pro have no "
        "SLA, although every plan runs on the same infrastructure.",
        "If monthly uptime on Enterprise falls below 99.9%, the customer gets a service credit "
        "of 10% of that month's fee; below 99.0%, the credit is 25%. Credits must be requested "
        "within 30 days of the end of the month.",
        "Scheduled maintenance is announced at least 72 hours in advance on "
        "status.bramblepost.example and does not count as downtime.",
    )),
    Page("roles", "Roles and permissions", (
        "A workspace has four roles: Owner, Admin, Member and Guest. There is exactly one "
        "owner; the owner can transfer ownership to an admin from Settings → General.",
        "Only the owner can change the plan, manage billing, close the workspace or lower the "
        "seat count. Admins can invite and deactivate members, manage integrations and "
        "configure SSO.",
        "Members can create spaces and pages, and can invite guests to pages they own unless "
        "an admin has turned guest invitations off for members.",
    )),
    Page("discounts", "Nonprofit and education discounts", (
        "Registered nonprofits get 50% off Team and Pro. Accredited schools and universities "
        "can use Team free of charge for up to 100 seats.",
        "To apply, the workspace owner sends proof of status through the discounts form; "
        "approval takes up to 10 business days. A discount applies from the next invoice and "
        "is not applied retroactively.",
        "Discounts cannot be combined with each other or with other promotions, and they do "
        "not apply to Enterprise or to add-ons.",
    )),
    Page("webhooks", "Webhooks", (
        "Webhooks are available on Pro and Enterprise. A workspace can register up to 20 "
        "webhook endpoints, each subscribed to events such as page.created, page.updated and "
        "member.added.",
        "Each delivery is signed with HMAC-SHA256, and the signature is sent in the "
        "X-Bramble-Signature header. Endpoints must use HTTPS and answer within 10 seconds.",
        "A failed delivery is retried up to 5 times over 24 hours with exponential backoff. "
        "After 50 failures in a row the endpoint is disabled and the admins are emailed.",
    )),
    Page("apps", "Desktop and mobile apps", (
        "Desktop apps are available for macOS 13 or later and Windows 10 or later. Mobile apps "
        "are available for iOS 16 or later and Android 11 or later.",
        "The desktop app keeps the last 500 pages you opened available offline, and edits made "
        "offline sync when you reconnect. The mobile apps can read cached pages offline but "
        "cannot edit them.",
        "There is no desktop app for Linux; Linux users can use the web app in any supported "
        "browser.",
    )),
    Page("workspace-closure", "Closing a workspace", (
        "Only the workspace owner can close a workspace, from Settings → General → Close "
        "workspace. Any paid plan must be cancelled first.",
        "The owner can reopen a closed workspace within 60 days. After 60 days its content is "
        "deleted permanently and cannot be recovered.",
    )),
)

# Pages a retriever tends to return alongside (or instead of) a page: the distractor pools.
RELATED: dict[str, tuple[str, ...]] = {
    "plans": ("seats", "billing", "storage", "guests"),
    "sso": ("security-addon", "two-factor", "roles", "audit-log"),
    "security-addon": ("sso", "audit-log", "plans", "two-factor"),
    "seats": ("plans", "billing", "guests", "roles"),
    "guests": ("seats", "roles", "plans"),
    "billing": ("refunds", "plans", "seats"),
    "refunds": ("billing", "plans", "workspace-closure"),
    "data-retention": ("workspace-closure", "exports", "storage"),
    "error-codes": ("api-rate-limits", "storage", "roles"),
    "api-rate-limits": ("webhooks", "error-codes", "plans"),
    "exports": ("data-retention", "storage", "roles"),
    "audit-log": ("security-addon", "roles", "sso"),
    "two-factor": ("sso", "security-addon", "roles"),
    "storage": ("plans", "exports", "error-codes"),
    "integrations": ("plans", "webhooks", "roles"),
    "data-residency": ("uptime-sla", "data-retention", "billing"),
    "uptime-sla": ("data-residency", "error-codes", "plans"),
    "roles": ("seats", "guests", "workspace-closure"),
    "discounts": ("plans", "billing", "refunds"),
    "webhooks": ("api-rate-limits", "integrations", "audit-log"),
    "apps": ("exports", "storage", "two-factor"),
    "workspace-closure": ("roles", "data-retention", "refunds"),
}

REFUSALS: tuple[str, ...] = (
    "I'm sorry, I couldn't find anything about {topic} in the help-centre articles I have.",
    "The sources I was given don't cover {topic}, so I can't answer that reliably.",
    "I don't know. None of the retrieved help-centre passages mention {topic}.",
    "I can't answer this from the available documentation: it doesn't say anything about "
    "{topic}.",
)


LOOKUP: tuple[Spec, ...] = (
    Spec(
        key="team-price", segment="lookup", doc="plans", needs=("plans#1",),
        questions=(
            "How much does the Team plan cost?",
            "What's the price of Bramblepost Team per user?",
            "Team plan pricing?",
        ),
        reference="$8 per seat per month billed annually, or $10 per seat per month billed "
        "monthly.",
        topic="the price of the Team plan",
        correct=(
            "The Team plan costs $8 per seat per month if you pay annually, or $10 per seat per "
            "month if you pay monthly.",
            "Team is $8 per seat per month on annual billing and $10 per seat per month on "
            "monthly billing.",
        ),
        unsupported=(
            ("Team costs $8 per seat per month billed annually or $10 billed monthly, and every "
             "new workspace starts with a 14-day free trial.",
             "the 14-day free trial is not in the sources"),
            ("The Team plan is $8 per seat per month (annual) or $10 (monthly). Annual billing "
             "also includes priority email support.",
             "priority email support is not mentioned anywhere"),
        ),
        dropped=(
            ("The Team plan costs $8 per seat per month.",
             "$8 is the annual-billing price only; monthly billing is $10"),
        ),
        contradiction=(
            ("Team costs $10 per seat per month billed annually, or $8 billed monthly.",
             "swaps the prices: annual is $8, monthly is $10"),
        ),
    ),
    Spec(
        key="free-members", segment="lookup", doc="plans", needs=("plans#2",),
        questions=(
            "How many people can use the Free plan?",
            "What's the member limit on Bramblepost Free?",
            "Is there a cap on members for free workspaces?",
        ),
        reference="Up to 3 members.",
        topic="the member limit of the Free plan",
        correct=(
            "The Free plan is for up to 3 members.",
            "A Free workspace can have at most 3 members. It also includes 1 GB of storage in "
            "total.",
        ),
        unsupported=(
            ("Free workspaces can have up to 3 members. If you need a few more, support can "
             "grant a temporary extension.",
             "a temporary extension from support is not in the sources"),
        ),
        contradiction=(
            ("The Free plan allows up to 5 members.", "the Free plan is for up to 3 members"),
            ("Up to 3 members, plus as many guests as you like.",
             "the Free plan has no guests"),
        ),
    ),
    Spec(
        key="trash-retention", segment="lookup", doc="data-retention",
        needs=("data-retention#1",),
        questions=(
            "How long do deleted pages stay in the trash?",
            "I deleted a page by mistake last week. How long do I have to restore it?",
            "When are trashed pages permanently deleted?",
        ),
        reference="30 days on paid plans and 7 days on Free; any editor of the page can "
        "restore it until then.",
        topic="how long deleted pages are kept",
        correct=(
            "Deleted pages stay in the trash for 30 days on paid plans and 7 days on the Free "
            "plan. Until then any editor of the page can restore it; after that it is deleted "
            "permanently.",
            "You have 30 days on a paid plan (7 days on Free). Any editor of the page can "
            "restore it from the trash during that time.",
        ),
        unsupported=(
            ("Deleted pages stay in the trash for 30 days on paid plans and 7 days on Free. "
             "Restoring a page also restores its comments and attachments.",
             "nothing says comments and attachments are restored"),
        ),
        dropped=(
            ("Deleted pages stay in the trash for 30 days, and any editor can restore them.",
             "drops that Free keeps trash for 7 days only"),
        ),
        contradiction=(
            ("Deleted pages are kept in the trash for 60 days on every plan.",
             "trash is 30 days on paid plans and 7 on Free; 60 days is workspace closure"),
        ),
    ),
    Spec(
        key="failed-payment", segment="lookup", doc="billing", needs=("billing#2",),
        questions=(
            "What happens if our card payment fails?",
            "Our card was declined. Will we lose access to Bramblepost?",
            "What does Bramblepost do when a subscription payment fails?",
        ),
        reference="The payment is retried 3 times over 10 days with an email to the owner "
        "each time; if the last retry fails, the workspace becomes read-only until the "
        "balance is paid. No content is deleted.",
        topic="failed card payments",
        correct=(
            "Bramblepost retries a failed card payment 3 times over 10 days and emails the "
            "workspace owner each time. If the last retry also fails, the workspace becomes "
            "read-only until the balance is paid; no content is deleted.",
            "You won't lose anything. The card is retried 3 times over 10 days, and if all "
            "retries fail the workspace is read-only until you pay. No content is deleted.",
        ),
        unsupported=(
            ("The payment is retried 3 times over 10 days. If it still fails the workspace "
             "becomes read-only, and a $25 late fee is added to the next invoice.",
             "the $25 late fee is not in the sources"),
        ),
        contradiction=(
            ("The payment is retried 3 times over 10 days; if it still fails, the workspace "
             "and its content are deleted.",
             "sources say the workspace becomes read-only and no content is deleted"),
        ),
    ),
    Spec(
        key="pdf-export-limit", segment="lookup", doc="exports", needs=("exports#1",),
        questions=(
            "Is there a limit on how big a PDF export can be?",
            "Can I export our whole 800-page space as one PDF?",
            "What's the maximum size of a PDF export?",
        ),
        reference="A PDF export can contain at most 500 pages; larger spaces must be exported "
        "as Markdown or HTML.",
        topic="limits on PDF exports",
        correct=(
            "A PDF export can contain at most 500 pages. For larger spaces, export as Markdown "
            "or HTML instead.",
            "PDF exports are limited to 500 pages, so a bigger space has to be exported as "
            "Markdown or HTML.",
        ),
        unsupported=(
            ("PDF exports can contain up to 500 pages, and PDFs larger than 100 MB are split "
             "into several files automatically.",
             "automatic splitting of large PDFs is not mentioned"),
        ),
        contradiction=(
            ("PDF exports are limited to 50 pages; use Markdown for anything larger.",
             "the PDF limit is 500 pages, not 50"),
        ),
    ),
    Spec(
        key="export-link-expiry", segment="lookup", doc="exports", needs=("exports#3",),
        questions=(
            "How long is an export download link valid?",
            "When does the link in the export email expire?",
        ),
        reference="Export download links expire after 7 days.",
        topic="how long export links stay valid",
        correct=(
            "Export download links expire after 7 days.",
            "The download link is valid for 7 days; after that it expires.",
        ),
        unsupported=(
            ("Export links expire after 7 days, but an admin can extend a link to 30 days.",
             "extending links to 30 days is not in the sources"),
        ),
        contradiction=(
            ("Export download links expire after 24 hours.",
             "links expire after 7 days; 24 hours is how often a full export can run"),
        ),
    ),
    Spec(
        key="history-pro", segment="lookup", doc="data-retention", needs=("data-retention#2",),
        questions=(
            "How long is page version history kept on Pro?",
            "On the Pro plan, how far back can I see old versions of a page?",
        ),
        reference="1 year on Pro.",
        topic="version history on Pro",
        correct=(
            "On Pro, page version history is kept for 1 year.",
            "Pro keeps page history for 1 year (Team keeps 90 days and Enterprise keeps it for "
            "the lifetime of the workspace).",
        ),
        unsupported=(
            ("Pro keeps version history for 1 year, and you can buy longer history as an "
             "add-on.",
             "there is no history add-on in the sources"),
        ),
        contradiction=(
            ("Page history on Pro is kept for 90 days.", "90 days is Team; Pro keeps 1 year"),
        ),
    ),
    Spec(
        key="storage-team", segment="lookup", doc="storage", needs=("storage#1",),
        questions=(
            "How much storage does the Team plan include?",
            "What's the storage allowance on Team?",
        ),
        reference="10 GB per paid seat, pooled across the workspace.",
        topic="storage on the Team plan",
        correct=(
            "Team includes 10 GB of storage per paid seat, pooled across the workspace.",
            "You get 10 GB per paid seat on Team, shared across the whole workspace.",
        ),
        unsupported=(
            ("Team includes 10 GB per paid seat, pooled across the workspace, and unused "
             "storage rolls over to the next month.",
             "storage roll-over is not in the sources"),
        ),
        dropped=(
            ("The Team plan includes 10 GB of storage.",
             "drops 'per paid seat': it reads as 10 GB for the whole workspace"),
        ),
        contradiction=(
            ("Team includes 50 GB of storage per paid seat.",
             "50 GB per seat is Pro; Team is 10 GB"),
        ),
    ),
    Spec(
        key="recovery-codes", segment="lookup", doc="two-factor", needs=("two-factor#3",),
        questions=(
            "How many recovery codes do I get when I turn on 2FA?",
            "Does two-factor authentication come with backup codes?",
        ),
        reference="10 single-use recovery codes.",
        topic="two-factor recovery codes",
        correct=(
            "You get 10 single-use recovery codes when you turn on two-factor authentication.",
            "Yes: turning on 2FA gives you 10 recovery codes, each usable once.",
        ),
        unsupported=(
            ("You get 10 single-use recovery codes, and you can generate a new set once a "
             "month.",
             "generating new sets monthly is not in the sources"),
        ),
        contradiction=(
            ("You get 5 recovery codes that can each be used twice.",
             "sources say 10 single-use codes"),
        ),
    ),
    Spec(
        key="invoice-payment", segment="lookup", doc="billing", needs=("billing#1",),
        questions=(
            "Can we pay by invoice instead of by card?",
            "Does Bramblepost accept bank transfer?",
            "Our finance team needs to pay by invoice. Is that possible?",
        ),
        reference="Yes, but only for annual plans totalling $3,000 or more per year: by "
        "invoice with bank transfer, due within 30 days.",
        topic="paying by invoice",
        correct=(
            "Yes, if you are on an annual plan that totals $3,000 or more per year. Those plans "
            "can be paid by invoice with bank transfer, and invoices are due within 30 days.",
            "Invoice payment by bank transfer is possible for annual plans of at least $3,000 "
            "a year; otherwise you pay by Visa, Mastercard or American Express.",
        ),
        unsupported=(
            ("Annual plans of $3,000 or more a year can be paid by invoice with bank transfer. "
             "Invoices can also be paid by PayPal.",
             "PayPal is not mentioned"),
        ),
        dropped=(
            ("Yes, you can pay by invoice with bank transfer; invoices are due within 30 days.",
             "drops the condition: annual plans of $3,000 or more per year only"),
        ),
        contradiction=(
            ("No, Bramblepost only accepts card payments.",
             "annual plans of $3,000+ can pay by invoice"),
        ),
    ),
    Spec(
        key="sla-credit", segment="lookup", doc="uptime-sla", needs=("uptime-sla#2",),
        also=("uptime-sla#1",),
        questions=(
            "What service credit do we get if uptime drops below 99.9%?",
            "How do SLA credits work?",
        ),
        reference="On Enterprise: 10% of that month's fee below 99.9%, 25% below 99.0%; "
        "credits must be requested within 30 days of the end of the month.",
        topic="SLA service credits",
        correct=(
            "On Enterprise, if monthly uptime falls below 99.9% you get a service credit of 10% "
            "of that month's fee, and 25% if it falls below 99.0%. Credits must be requested "
            "within 30 days of the end of the month.",
            "Enterprise customers get 10% of the month's fee back as a credit below 99.9% "
            "uptime and 25% below 99.0%, if they ask within 30 days after the month ends.",
        ),
        unsupported=(
            ("Below 99.9% uptime Enterprise customers get a 10% credit, and below 99.0% a 25% "
             "credit; credits are applied automatically to the next invoice.",
             "credits are not automatic: they must be requested within 30 days"),
        ),
        dropped=(
            ("You get a 10% service credit below 99.9% uptime, or 25% below 99.0%.",
             "drops Enterprise-only and the 30-day window to request the credit"),
        ),
        contradiction=(
            ("Credits are 25% of the monthly fee below 99.9% and 50% below 99.0%.",
             "credits are 10% and 25%"),
        ),
    ),
    Spec(
        key="webhook-retries", segment="lookup", doc="webhooks", needs=("webhooks#3",),
        questions=(
            "How often are failed webhook deliveries retried?",
            "What happens when my webhook endpoint is down?",
        ),
        reference="Up to 5 retries over 24 hours with exponential backoff; after 50 failures "
        "in a row the endpoint is disabled and admins are emailed.",
        topic="webhook delivery retries",
        correct=(
            "A failed delivery is retried up to 5 times over 24 hours with exponential "
            "backoff. After 50 failures in a row, the endpoint is disabled and the admins are "
            "emailed.",
            "Bramblepost retries each failed delivery up to 5 times within 24 hours, backing "
            "off exponentially; an endpoint that fails 50 times in a row gets disabled.",
        ),
        unsupported=(
            ("Failed deliveries are retried up to 5 times over 24 hours, and you can replay "
             "any failed delivery from the dashboard for 7 days.",
             "replaying deliveries from a dashboard is not in the sources"),
        ),
        contradiction=(
            ("Failed deliveries are retried every hour for 3 days.",
             "up to 5 retries over 24 hours"),
        ),
    ),
    Spec(
        key="region-move", segment="lookup", doc="data-residency",
        needs=("data-residency#2",),
        questions=(
            "Can we move our workspace from the US region to the EU?",
            "Is it possible to change our data region after setup?",
        ),
        reference="Only on Enterprise. A move takes up to 5 business days and the workspace "
        "is read-only for up to 4 hours during the final copy.",
        topic="moving a workspace to another region",
        correct=(
            "Yes, but only on Enterprise. A move takes up to 5 business days, and the "
            "workspace is read-only for up to 4 hours during the final copy.",
            "Region moves are an Enterprise-only option. Expect up to 5 business days, with up "
            "to 4 hours of read-only time at the end.",
        ),
        unsupported=(
            ("On Enterprise you can move regions at no extra cost; it takes up to 5 business "
             "days and up to 4 hours of read-only time.",
             "'at no extra cost' is not in the sources"),
        ),
        dropped=(
            ("Yes. Moving to the other region takes up to 5 business days, with up to 4 hours "
             "of read-only time during the final copy.",
             "drops that region moves are Enterprise only"),
        ),
        contradiction=(
            ("No, the region can never be changed once the workspace has been created.",
             "Enterprise workspaces can move regions"),
        ),
    ),
    Spec(
        key="offline-edit", segment="lookup", doc="apps", needs=("apps#2",),
        questions=(
            "Can I edit pages offline?",
            "Does Bramblepost work without an internet connection?",
        ),
        reference="In the desktop app, yes: the last 500 pages opened are available offline "
        "and offline edits sync on reconnect. The mobile apps can only read cached pages "
        "offline.",
        topic="offline editing",
        correct=(
            "Yes, in the desktop app: it keeps the last 500 pages you opened available "
            "offline, and offline edits sync when you reconnect. The mobile apps can read "
            "cached pages offline but cannot edit them.",
            "The desktop app supports offline editing of the last 500 pages you opened and "
            "syncs when you're back online; on mobile, offline is read-only.",
        ),
        unsupported=(
            ("Yes. The desktop app keeps your whole workspace available offline and syncs "
             "edits when you reconnect.",
             "only the last 500 pages opened, not the whole workspace"),
        ),
        dropped=(
            ("Yes, pages can be edited offline and your edits sync when you reconnect.",
             "drops desktop-only: the mobile apps cannot edit offline"),
        ),
        contradiction=(
            ("No, Bramblepost needs an internet connection for all edits.",
             "the desktop app supports offline edits"),
        ),
    ),
    Spec(
        key="discount-approval", segment="lookup", doc="discounts", needs=("discounts#2",),
        questions=(
            "How long does it take to get the nonprofit discount approved?",
            "We applied for the nonprofit discount. When will it show up on our bill?",
        ),
        reference="Approval takes up to 10 business days; the discount applies from the next "
        "invoice and is not retroactive.",
        topic="nonprofit discount approval",
        correct=(
            "Approval takes up to 10 business days. The discount then applies from your next "
            "invoice; it is not applied retroactively.",
            "Expect up to 10 business days for approval, after which the discount shows up on "
            "the next invoice (earlier invoices are not changed).",
        ),
        unsupported=(
            ("Approval takes up to 10 business days, and you need to send new proof of status "
             "every year.",
             "yearly re-verification is not in the sources"),
        ),
        contradiction=(
            ("Approval takes up to 10 business days, and the discount is then backdated to "
             "the date you applied.",
             "discounts are not applied retroactively"),
        ),
    ),
    Spec(
        key="close-workspace", segment="lookup", doc="workspace-closure",
        needs=("workspace-closure#1",), also=("roles#2",),
        questions=(
            "Who can close a workspace?",
            "Can an admin shut down our Bramblepost workspace?",
        ),
        reference="Only the workspace owner, from Settings → General → Close workspace, after "
        "cancelling any paid plan.",
        topic="closing a workspace",
        correct=(
            "Only the workspace owner can close a workspace, from Settings → General → Close "
            "workspace, and any paid plan has to be cancelled first.",
            "Only the owner can close it, in Settings → General → Close workspace, after "
            "cancelling the paid plan.",
        ),
        unsupported=(
            ("Only the owner can close the workspace, and closing it refunds the rest of the "
             "current term.",
             "closing does not refund anything according to the sources"),
        ),
        dropped=(
            ("The workspace owner can close it from Settings → General → Close workspace.",
             "drops that a paid plan must be cancelled first"),
        ),
        contradiction=(
            ("The owner or any admin can close the workspace.", "only the owner can close it"),
        ),
    ),
)

MULTI_PAGE: tuple[Spec, ...] = (
    Spec(
        key="sso-pro-30-seats", segment="multi_page", doc="sso",
        needs=("sso#2", "security-addon#1"),
        questions=(
            "We're on Pro with 30 seats. Can we turn on SSO, and what would it cost?",
            "Our 30-person team is on the Pro plan. Is SAML SSO available to us, and is there "
            "an extra charge?",
            "Does SSO on Pro cost extra for a workspace of 30 seats?",
        ),
        reference="Yes, with the Security add-on: Pro workspaces under 50 paid seats need it "
        "for SSO. It costs $4 per seat per month for every paid seat, so $120 a month for 30 "
        "seats.",
        topic="SSO pricing on the Pro plan",
        correct=(
            "Yes. SSO is available on Pro, but because your workspace has fewer than 50 paid "
            "seats you need the Security add-on. The add-on costs $4 per seat per month and is "
            "billed for every paid seat, so about $120 a month for 30 seats.",
            "You can, with the Security add-on: Pro workspaces under 50 paid seats need it to "
            "turn on SSO. It's $4 per seat per month across all paid seats.",
        ),
        unsupported=(
            ("Yes, SAML SSO is included in the Pro plan at no extra cost.",
             "'at no extra cost' is unsupported; under 50 seats you need the paid add-on"),
            ("Yes. With 30 seats you need the Security add-on, which costs $4 per seat per "
             "month; the first 3 months of the add-on are free.",
             "the free first 3 months are not in the sources"),
        ),
        dropped=(
            ("Yes, SAML SSO is available on the Pro plan.",
             "drops the condition: Pro workspaces under 50 seats need the Security add-on"),
            ("Yes. Bramblepost supports SAML SSO on Pro and Enterprise; you can set it up "
             "under Settings → Security → Single sign-on.",
             "drops that under 50 seats SSO needs the Security add-on"),
        ),
        contradiction=(
            ("No, SSO is only available on Enterprise.", "SSO is available on Pro"),
        ),
    ),
    Spec(
        key="sso-team-addon", segment="multi_page", doc="sso",
        needs=("sso#1", "security-addon#3"),
        questions=(
            "Can a Team workspace get SSO by buying the Security add-on?",
            "We're on Team. If we add the Security add-on, do we get single sign-on?",
        ),
        reference="No. SSO is only on Pro and Enterprise, and the Security add-on cannot be "
        "added to Team; you would have to upgrade to Pro.",
        topic="SSO on the Team plan",
        correct=(
            "No. SSO is only available on Pro and Enterprise, and the Security add-on is not "
            "available on Team, so you would need to upgrade to Pro first.",
            "Not on Team: single sign-on needs Pro or Enterprise, and the Security add-on can't "
            "be added to a Team workspace.",
        ),
        unsupported=(
            ("No, SSO needs Pro or Enterprise and the add-on isn't sold for Team, but Team "
             "workspaces can request a 30-day SSO trial.",
             "an SSO trial for Team is not in the sources"),
        ),
        contradiction=(
            ("Yes, adding the Security add-on to a Team workspace unlocks SSO.",
             "the add-on cannot be added to Team, and SSO is not on Team"),
        ),
    ),
    Spec(
        key="audit-siem-pro", segment="multi_page", doc="audit-log",
        needs=("audit-log#3", "security-addon#1"),
        questions=(
            "What does it take to stream our audit log to Splunk on Pro, and what does that "
            "cost?",
            "Can we send Bramblepost audit events to our SIEM on the Pro plan? Price?",
        ),
        reference="On Pro, SIEM streaming needs the Security add-on, which costs $4 per seat "
        "per month for every paid seat.",
        topic="audit log streaming on Pro",
        correct=(
            "On Pro, streaming the audit log to a SIEM such as Splunk requires the Security "
            "add-on. The add-on costs $4 per seat per month and is billed for every paid seat.",
            "You need the Security add-on for SIEM streaming on Pro; it's $4 per seat per "
            "month across all paid seats (Enterprise includes streaming).",
        ),
        unsupported=(
            ("You need the Security add-on ($4 per seat per month). Streaming is limited to "
             "1,000 events per minute.",
             "the 1,000 events per minute limit is not in the sources"),
        ),
        dropped=(
            ("Yes, Pro workspaces can stream the audit log to Splunk, Datadog or any HTTPS "
             "endpoint.",
             "drops that streaming on Pro requires the Security add-on"),
        ),
        contradiction=(
            ("You need the Security add-on, at $4 per month for each admin seat.",
             "the add-on is billed for every paid seat, not admins only"),
        ),
    ),
    Spec(
        key="cancel-team-8-members", segment="multi_page", doc="refunds",
        needs=("refunds#3", "plans#2"),
        questions=(
            "If we cancel our Team plan and we have 8 members, what happens to the workspace?",
            "We're cancelling Team. What happens to our 8-person workspace afterwards?",
        ),
        reference="At the end of the term it moves to Free, which allows up to 3 members; "
        "with 8 members it becomes read-only until members are removed or a paid plan is "
        "chosen.",
        topic="what happens after cancelling",
        correct=(
            "At the end of the term the workspace moves to the Free plan. Free is for up to 3 "
            "members, so with 8 members the workspace becomes read-only until you remove "
            "members or choose a paid plan again.",
            "It drops to Free when the term ends. Because Free allows only 3 members and you "
            "have 8, the workspace becomes read-only until you're down to 3 or pick a paid "
            "plan.",
        ),
        unsupported=(
            ("The workspace moves to Free at the end of the term, and the 5 most recently "
             "added members are removed automatically.",
             "nothing says members are removed automatically; it becomes read-only"),
        ),
        dropped=(
            ("At the end of the term the workspace moves to the Free plan.",
             "drops that with more than 3 members it becomes read-only"),
        ),
        contradiction=(
            ("The workspace and its pages are deleted at the end of the term.",
             "it moves to Free, it is not deleted"),
        ),
    ),
    Spec(
        key="guests-pro-20", segment="multi_page", doc="guests",
        needs=("guests#2", "seats#1"), also=("guests#1",),
        questions=(
            "How many guests can a 20-seat Pro workspace invite, and do they use up seats?",
            "We have 20 paid seats on Pro. How many external guests can we add, and will they "
            "count towards our seats?",
        ),
        reference="Up to 100 guests (5 per paid seat on Pro); guests do not use a paid seat.",
        topic="guest limits on Pro",
        correct=(
            "Pro allows up to 5 guests per paid seat, so up to 100 guests with 20 seats. "
            "Guests do not use a paid seat.",
            "Up to 100: Pro workspaces can invite 5 guests per paid seat, and guests don't "
            "take up seats.",
        ),
        unsupported=(
            ("Up to 100 guests (5 per paid seat), and guests don't use seats. Guests beyond "
             "that cost $2 each per month.",
             "paying for extra guests is not in the sources"),
        ),
        dropped=(
            ("Guests don't use a paid seat, so you can invite as many as you like.",
             "drops the limit of 5 guests per paid seat on Pro"),
        ),
        contradiction=(
            ("Pro allows 2 guests per paid seat, so 40 guests.",
             "2 per seat is Team; Pro allows 5 per seat"),
        ),
    ),
    Spec(
        key="nonprofit-addon", segment="multi_page", doc="discounts",
        needs=("discounts#1", "discounts#3", "security-addon#1"),
        questions=(
            "We're a nonprofit on Pro. Does our 50% discount also apply to the Security "
            "add-on?",
            "Is the Security add-on half price for nonprofits?",
        ),
        reference="No. Nonprofits get 50% off Pro, but discounts do not apply to add-ons, so "
        "the Security add-on stays at $4 per seat per month.",
        topic="nonprofit discounts on add-ons",
        correct=(
            "No. Registered nonprofits get 50% off Team and Pro, but discounts don't apply to "
            "add-ons, so the Security add-on stays at $4 per seat per month.",
            "The 50% nonprofit discount covers your Pro plan but not add-ons; the Security "
            "add-on is billed at the normal $4 per seat per month.",
        ),
        unsupported=(
            ("No, discounts don't apply to add-ons, but nonprofits get the add-on's SSO "
             "feature for free.",
             "free SSO for nonprofits is not in the sources"),
        ),
        contradiction=(
            ("Yes, the 50% discount applies to the add-on too, so it costs $2 per seat per "
             "month.",
             "discounts do not apply to add-ons"),
        ),
    ),
    Spec(
        key="sso-session-length", segment="multi_page", doc="error-codes",
        needs=("error-codes#1", "security-addon#2"),
        questions=(
            "Our SSO sessions expire after 12 hours and people get BP-401. Can we make "
            "sessions last longer?",
            "Can we extend the 12-hour session length on our SSO workspace?",
        ),
        reference="Yes, with the Security add-on: it allows custom session timeouts between "
        "15 minutes and 30 days. Without it, SSO sessions last 12 hours.",
        topic="session length on SSO workspaces",
        correct=(
            "Yes, with the Security add-on. SSO sessions last 12 hours by default, and the "
            "add-on lets you set a custom session timeout anywhere between 15 minutes and 30 "
            "days.",
            "12 hours is the default for SSO sessions. The Security add-on adds custom session "
            "timeouts from 15 minutes up to 30 days.",
        ),
        unsupported=(
            ("Yes, any admin can raise the session length under Settings → General, up to 30 "
             "days.",
             "no such setting in the sources; custom timeouts come with the Security add-on"),
        ),
        dropped=(
            ("Yes, you can set a custom session timeout of up to 30 days.",
             "drops that custom timeouts need the Security add-on"),
        ),
        contradiction=(
            ("No, SSO sessions are always 12 hours and cannot be changed.",
             "the Security add-on allows custom timeouts"),
        ),
    ),
    Spec(
        key="jira-on-team", segment="multi_page", doc="integrations",
        needs=("integrations#1", "plans#4"),
        questions=(
            "We're on Team. Can we connect Jira, and if not, what do we need to do?",
            "Jira integration on the Team plan: possible? If not, how quickly can we get it?",
        ),
        reference="No, Jira needs Pro or Enterprise. Upgrade from Settings → Billing; upgrades "
        "take effect immediately and are prorated.",
        topic="the Jira integration on Team",
        correct=(
            "Not on Team: the Jira integration requires Pro or Enterprise. You can upgrade "
            "from Settings → Billing, and upgrades take effect immediately and are prorated.",
            "Jira is a Pro and Enterprise integration. Upgrading from Settings → Billing takes "
            "effect immediately (prorated), after which an admin can install it.",
        ),
        unsupported=(
            ("Jira needs Pro or Enterprise. If you upgrade from Team, your first month of Pro "
             "is free.",
             "a free month on upgrade is not in the sources"),
        ),
        dropped=(
            ("Yes, Bramblepost integrates with Jira; an admin can install it from "
             "Settings → Integrations.",
             "drops that Jira requires Pro or Enterprise (they are on Team)"),
        ),
        contradiction=(
            ("Yes, Jira is available on every paid plan, including Team.",
             "Jira requires Pro or Enterprise"),
        ),
    ),
    Spec(
        key="sso-2fa", segment="multi_page", doc="two-factor",
        needs=("two-factor#4", "sso#3"),
        questions=(
            "We use SSO through Okta. Do we also need to enforce Bramblepost's two-factor "
            "authentication?",
            "We sign in with Okta SSO. Does Bramblepost's own 2FA still apply?",
        ),
        reference="No. Bramblepost's two-factor settings do not apply to SSO sign-ins; the "
        "identity provider (here Okta) handles them.",
        topic="two-factor authentication with SSO",
        correct=(
            "No. Bramblepost's two-factor settings don't apply to SSO sign-ins; your identity "
            "provider, Okta in your case, handles that.",
            "Two-factor settings in Bramblepost are not used for SSO sign-ins. Configure "
            "multi-factor in Okta, which is one of the tested identity providers.",
        ),
        unsupported=(
            ("No. Bramblepost 2FA doesn't apply to SSO sign-ins, and Okta's MFA events are "
             "copied into the Bramblepost audit log.",
             "copying Okta MFA events into the audit log is not in the sources"),
        ),
        contradiction=(
            ("Yes, Bramblepost's two-factor check runs after the SSO sign-in as well.",
             "2FA settings do not apply to SSO sign-ins"),
        ),
    ),
    Spec(
        key="webhooks-on-team", segment="multi_page", doc="webhooks",
        needs=("webhooks#1", "api-rate-limits#1", "api-rate-limits#2"),
        questions=(
            "Can our Team workspace get webhooks when pages change? Otherwise we'd poll the "
            "API.",
            "Are webhooks available on Team, and what's the API limit if we poll instead?",
        ),
        reference="No, webhooks are Pro and Enterprise only. Team has the REST API with 100 "
        "requests per minute per token.",
        topic="webhooks on the Team plan",
        correct=(
            "Webhooks are only available on Pro and Enterprise. Team does have the REST API, "
            "limited to 100 requests per minute per token, so polling is an option.",
            "Not on Team: webhooks need Pro or Enterprise. If you poll the API instead, Team "
            "allows 100 requests per minute per token.",
        ),
        unsupported=(
            ("Team has no webhooks, but polling the API is not rate-limited for page-change "
             "queries.",
             "the sources give a 100 requests/min limit on Team, with no exemption"),
        ),
        dropped=(
            ("Yes, you can register up to 20 webhook endpoints and subscribe to page.updated.",
             "drops that webhooks are Pro/Enterprise only (they are on Team)"),
            ("Webhooks aren't on Team; you can poll the API at up to 100 requests per minute.",
             "drops 'per token'"),
        ),
        contradiction=(
            ("Yes, webhooks are available on all paid plans.",
             "webhooks are Pro and Enterprise only"),
        ),
    ),
    Spec(
        key="remove-seats-bill", segment="multi_page", doc="seats",
        needs=("seats#1", "seats#2"), also=("roles#2",),
        questions=(
            "If we remove 5 members mid-year, when does our bill go down, and who can lower "
            "the seat count?",
            "We're removing people from the workspace. Does the invoice shrink right away?",
        ),
        reference="Removing members frees the seats, but the seat count on the bill goes down "
        "only at the next renewal; only the owner can lower the seat count (Settings → "
        "Billing → Seats).",
        topic="lowering the seat count",
        correct=(
            "Removing members frees their seats, but your bill only goes down at the next "
            "renewal. Only the owner can lower the seat count, in Settings → Billing → Seats.",
            "Not right away: the seat count on your bill drops at the next renewal. The owner "
            "is the only one who can lower it (Settings → Billing → Seats).",
        ),
        unsupported=(
            ("Your bill goes down at the next renewal, and you receive account credit for the "
             "unused seats in the meantime.",
             "credit for unused seats is not in the sources"),
        ),
        dropped=(
            ("The seat count on your bill goes down at the next renewal. You can lower it in "
             "Settings → Billing → Seats.",
             "drops that only the owner can lower the seat count"),
        ),
        contradiction=(
            ("Your bill is reduced immediately and prorated; owners and admins can lower the "
             "seat count.",
             "the bill goes down only at renewal, and only the owner lowers seats"),
        ),
    ),
)

IDENTIFIER: tuple[Spec, ...] = (
    Spec(
        key="bp-409", segment="identifier", doc="error-codes", needs=("error-codes#3",),
        questions=(
            "What does error BP-409 mean?",
            "I got BP-409 while saving a page. What happened?",
        ),
        reference="An edit conflict: someone saved the page while you were editing. Both "
        "versions are kept; choose one in the conflict dialog.",
        topic="error BP-409",
        correct=(
            "BP-409 is an edit conflict: someone saved the page while you were editing it. "
            "Bramblepost keeps both versions, and you choose one in the conflict dialog.",
            "It means an edit conflict. Another person saved while you were editing; both "
            "versions are kept and the conflict dialog lets you pick one.",
        ),
        unsupported=(
            ("BP-409 is an edit conflict. It usually happens when two people save within the "
             "same 5 seconds.",
             "the 5-second window is not in the sources"),
        ),
        contradiction=(
            ("BP-409 means the file you uploaded is too large.",
             "that is BP-413; BP-409 is an edit conflict"),
            ("BP-409 is an edit conflict; Bramblepost automatically merges the two versions.",
             "it keeps both versions and you pick one; nothing is merged"),
        ),
    ),
    Spec(
        key="bp-413-free", segment="identifier", doc="error-codes",
        needs=("error-codes#3",),
        questions=(
            "I get BP-413 when uploading a 100 MB video on the Free plan. Why?",
            "Why does my 40 MB upload fail with BP-413? We're on Free.",
        ),
        reference="BP-413 means the file is too large: uploads are limited to 25 MB per file "
        "on Free (250 MB on paid plans).",
        topic="error BP-413",
        correct=(
            "BP-413 means the file is too large. On the Free plan uploads are limited to 25 MB "
            "per file; paid plans allow 250 MB.",
            "Your file is over the upload limit: 25 MB per file on Free (250 MB on paid "
            "plans), which is what BP-413 reports.",
        ),
        unsupported=(
            ("BP-413 means the file is too large (25 MB on Free). Videos are also compressed "
             "automatically if they are under 1 GB.",
             "automatic video compression is not in the sources"),
        ),
        dropped=(
            ("BP-413 means the file is too large; uploads are limited to 250 MB per file.",
             "250 MB is for paid plans; Free is limited to 25 MB"),
        ),
        contradiction=(
            ("BP-413 means your workspace has run out of storage.",
             "BP-413 is a per-file size limit, not a storage limit"),
        ),
    ),
    Spec(
        key="retry-after-header", segment="identifier", doc="api-rate-limits",
        needs=("api-rate-limits#3",),
        questions=(
            "Which header tells me how long to wait after a 429 from the API?",
            "After HTTP 429, what response header has the wait time?",
        ),
        reference="The Retry-After header, giving the number of seconds to wait.",
        topic="the wait time after a 429",
        correct=(
            "The Retry-After header gives the number of seconds to wait.",
            "Read Retry-After: on a 429 (error code BP-429) it holds the seconds to wait before "
            "retrying.",
        ),
        unsupported=(
            ("Use the X-Bramble-Wait header, which gives the wait in milliseconds.",
             "there is no X-Bramble-Wait header in the sources"),
        ),
        contradiction=(
            ("The API sends no wait header on a 429; wait one minute before retrying.",
             "a Retry-After header is sent"),
        ),
    ),
    Spec(
        key="webhook-signature", segment="identifier", doc="webhooks",
        needs=("webhooks#2",),
        questions=(
            "Which header carries the webhook signature, and what algorithm is used?",
            "How do I verify that a webhook really came from Bramblepost?",
        ),
        reference="Deliveries are signed with HMAC-SHA256; the signature is in the "
        "X-Bramble-Signature header.",
        topic="webhook signatures",
        correct=(
            "Each delivery is signed with HMAC-SHA256, and the signature is in the "
            "X-Bramble-Signature header.",
            "Check the X-Bramble-Signature header: every delivery is signed with HMAC-SHA256.",
        ),
        unsupported=(
            ("The signature is an HMAC-SHA256 in the X-Bramble-Signature header; the signing "
             "secret rotates automatically every 90 days.",
             "automatic secret rotation is not in the sources"),
        ),
        contradiction=(
            ("Deliveries are signed with HMAC-SHA1 in the X-Hub-Signature header.",
             "it is HMAC-SHA256 in X-Bramble-Signature"),
        ),
    ),
    Spec(
        key="bp-503", segment="identifier", doc="error-codes", needs=("error-codes#4",),
        questions=(
            "What does BP-503 mean?",
            "The app shows BP-503. Is something wrong with our workspace?",
        ),
        reference="Scheduled maintenance or an outage; check status.bramblepost.example.",
        topic="error BP-503",
        correct=(
            "BP-503 means scheduled maintenance or an outage. Check "
            "status.bramblepost.example for updates.",
            "It's not your workspace: BP-503 signals maintenance or an outage, and "
            "status.bramblepost.example has the updates.",
        ),
        unsupported=(
            ("BP-503 means maintenance or an outage; it usually clears within 15 minutes.",
             "the 15-minute estimate is not in the sources"),
        ),
        contradiction=(
            ("BP-503 means the workspace is read-only because of an unpaid invoice.",
             "BP-503 is maintenance or an outage"),
        ),
    ),
    Spec(
        key="sso-idps", segment="identifier", doc="sso", needs=("sso#3",),
        questions=(
            "Which identity providers work with Bramblepost SSO?",
            "Is Microsoft Entra ID supported for single sign-on?",
        ),
        reference="Tested: Okta, Microsoft Entra ID, Google Workspace and OneLogin; any SAML "
        "2.0 identity provider should work.",
        topic="supported identity providers",
        correct=(
            "Okta, Microsoft Entra ID, Google Workspace and OneLogin are tested, and any SAML "
            "2.0 identity provider should work.",
            "The tested identity providers are Okta, Microsoft Entra ID, Google Workspace and "
            "OneLogin; other SAML 2.0 providers should also work.",
        ),
        unsupported=(
            ("Okta, Microsoft Entra ID, Google Workspace and OneLogin are tested, and OpenID "
             "Connect providers such as Auth0 are supported too.",
             "OpenID Connect / Auth0 is not in the sources (SAML 2.0 only)"),
        ),
        contradiction=(
            ("Only Okta and Google Workspace are supported.",
             "Entra ID and OneLogin are tested too, and any SAML 2.0 IdP should work"),
        ),
    ),
    Spec(
        key="rate-limit-pro", segment="identifier", doc="api-rate-limits",
        needs=("api-rate-limits#2",),
        questions=(
            "What's the API rate limit on Pro?",
            "How many requests per minute can I make on the Pro plan?",
        ),
        reference="600 requests per minute per token; each search call counts as 5 requests.",
        topic="the API rate limit on Pro",
        correct=(
            "On Pro the limit is 600 requests per minute per token, and each search call "
            "counts as 5 requests.",
            "600 requests per minute for each token on Pro (search endpoints count 5 each).",
        ),
        unsupported=(
            ("600 requests per minute per token, with short bursts of up to 1,000 allowed.",
             "bursts of 1,000 are not in the sources"),
        ),
        dropped=(
            ("Pro allows 600 requests per minute.",
             "drops 'per token' and that search calls count as 5"),
        ),
        contradiction=(
            ("Pro allows 100 requests per minute per token.", "100 is Team; Pro is 600"),
        ),
    ),
    Spec(
        key="rate-limit-headers", segment="identifier", doc="api-rate-limits",
        needs=("api-rate-limits#3",),
        questions=(
            "Which rate-limit headers does the Bramblepost API return?",
            "How can my client see how many API requests it has left?",
        ),
        reference="X-RateLimit-Limit, X-RateLimit-Remaining and X-RateLimit-Reset on every "
        "response.",
        topic="rate-limit headers",
        correct=(
            "Every response includes X-RateLimit-Limit, X-RateLimit-Remaining and "
            "X-RateLimit-Reset.",
            "Check X-RateLimit-Remaining; every response also has X-RateLimit-Limit and "
            "X-RateLimit-Reset.",
        ),
        unsupported=(
            ("Every response has X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset "
             "and X-RateLimit-Used.",
             "X-RateLimit-Used is not in the sources"),
        ),
        contradiction=(
            ("The API only reports limits in the body of a 429 response, not in headers.",
             "every response includes the X-RateLimit headers"),
        ),
    ),
    Spec(
        key="bp-403", segment="identifier", doc="error-codes", needs=("error-codes#2",),
        questions=(
            "I keep seeing BP-403 on one page. What should I do?",
            "What is error BP-403?",
        ),
        reference="You don't have permission for that page or action; ask the page owner or "
        "a workspace admin for access.",
        topic="error BP-403",
        correct=(
            "BP-403 means you don't have permission for this page or action. Ask the page "
            "owner or a workspace admin for access.",
            "It's a permissions error: request access from the page owner or a workspace "
            "admin.",
        ),
        unsupported=(
            ("BP-403 is a permissions error; access requests are approved automatically after "
             "24 hours.",
             "automatic approval is not in the sources"),
        ),
        contradiction=(
            ("BP-403 means the page was deleted.", "that is BP-404; BP-403 is permissions"),
        ),
    ),
    Spec(
        key="webhook-events", segment="identifier", doc="webhooks", needs=("webhooks#1",),
        questions=(
            "Which webhook events can I subscribe to?",
            "Is there a webhook event for new members?",
        ),
        reference="Events such as page.created, page.updated and member.added (so yes, "
        "member.added).",
        topic="webhook events",
        correct=(
            "Endpoints can subscribe to events such as page.created, page.updated and "
            "member.added.",
            "Events include member.added for new members, plus page.created and page.updated.",
        ),
        unsupported=(
            ("You can subscribe to page.created, page.updated, page.deleted, member.added and "
             "comment.created.",
             "page.deleted and comment.created are not named in the sources"),
        ),
        contradiction=(
            ("Webhooks only cover page events; there is no member event.",
             "member.added is a webhook event"),
        ),
    ),
    Spec(
        key="sso-settings-path", segment="identifier", doc="sso", needs=("sso#3",),
        also=("roles#2",),
        questions=(
            "Where do I configure SSO, and who is allowed to?",
            "Which settings page has the SAML configuration?",
        ),
        reference="Settings → Security → Single sign-on; only the workspace owner and admins "
        "can configure it.",
        topic="where SSO is configured",
        correct=(
            "Under Settings → Security → Single sign-on. Only the workspace owner and admins "
            "can configure SSO.",
            "It's in Settings → Security → Single sign-on, available to the owner and admins.",
        ),
        unsupported=(
            ("Go to Settings → Security → Single sign-on; you'll need to verify your domain "
             "with a DNS TXT record first.",
             "DNS domain verification is not in the sources"),
        ),
        contradiction=(
            ("SSO is configured under Settings → Billing → Add-ons by any member.",
             "it's Settings → Security → Single sign-on, owner and admins only"),
        ),
    ),
)

NEGATION: tuple[Spec, ...] = (
    Spec(
        key="sms-2fa", segment="negation", doc="two-factor", needs=("two-factor#1",),
        questions=(
            "Can I get two-factor codes by SMS?",
            "Is SMS not an option for 2FA?",
        ),
        reference="No, SMS codes are not supported; use an authenticator app (TOTP) or a "
        "hardware security key.",
        topic="SMS two-factor codes",
        correct=(
            "No. SMS codes are not supported; use an authenticator app (TOTP) or a hardware "
            "security key (WebAuthn / FIDO2).",
            "SMS isn't supported for two-factor. Your options are an authenticator app or a "
            "hardware security key.",
        ),
        unsupported=(
            ("SMS isn't supported, but you can receive codes by email instead.",
             "email codes are not in the sources"),
        ),
        contradiction=(
            ("Yes, you can choose SMS codes when you set up two-factor authentication.",
             "SMS codes are not supported"),
        ),
    ),
    Spec(
        key="no-api-plans", segment="negation", doc="api-rate-limits",
        needs=("api-rate-limits#1",), also=("plans#2",),
        questions=(
            "Which plans don't include API access?",
            "Is there any plan without the REST API?",
        ),
        reference="Only the Free plan has no API access; Team, Pro and Enterprise have it.",
        topic="which plans lack API access",
        correct=(
            "Only the Free plan has no API access. Team, Pro and Enterprise all include the "
            "REST API.",
            "Just Free. The REST API is available on Team, Pro and Enterprise.",
        ),
        unsupported=(
            ("Only Free lacks the API, and Free workspaces can get read-only API access on "
             "request.",
             "read-only API access on request is not in the sources"),
        ),
        contradiction=(
            ("Free and Team don't have API access; the API starts on Pro.",
             "Team has API access"),
        ),
    ),
    Spec(
        key="linux-app", segment="negation", doc="apps", needs=("apps#3",),
        questions=(
            "Is there a Bramblepost desktop app for Linux?",
            "Don't you have a Linux client?",
        ),
        reference="No, there is no Linux desktop app; Linux users can use the web app in any "
        "supported browser.",
        topic="a Linux desktop app",
        correct=(
            "No, there is no desktop app for Linux. Linux users can use the web app in any "
            "supported browser.",
            "There isn't one; on Linux, use the web app in a supported browser.",
        ),
        unsupported=(
            ("Not yet. A Linux app is in beta and planned for release next year; until then "
             "use the web app.",
             "a Linux beta is not in the sources"),
        ),
        contradiction=(
            ("Yes, there is a desktop app for Linux as well as macOS and Windows.",
             "there is no Linux desktop app"),
        ),
    ),
    Spec(
        key="guests-seats", segment="negation", doc="guests",
        needs=("guests#1", "guests#2"), also=("seats#1",),
        questions=(
            "Don't guests count towards our seats?",
            "Do guests take up a paid seat?",
        ),
        reference="No, guests are free and do not use a seat, within the limit of 2 guests "
        "per paid seat on Team and 5 on Pro and Enterprise (none on Free).",
        topic="whether guests use seats",
        correct=(
            "No. Guests are free and don't use a seat. Team allows up to 2 guests per paid "
            "seat, Pro and Enterprise up to 5, and Free doesn't allow guests.",
            "Guests don't use paid seats, but there is a cap: 2 per paid seat on Team and 5 on "
            "Pro and Enterprise.",
        ),
        unsupported=(
            ("No, guests are free and don't use a seat, and they can also use the API with "
             "their own token.",
             "guests cannot use the API"),
        ),
        dropped=(
            ("No, guests are free, so you can invite as many as you like.",
             "drops the per-seat guest limits (2 on Team, 5 on Pro/Enterprise)"),
        ),
        contradiction=(
            ("Yes, every guest uses a paid seat.", "guests do not use a seat"),
        ),
    ),
    Spec(
        key="support-2fa-reset", segment="negation", doc="two-factor",
        needs=("two-factor#3",),
        questions=(
            "I lost my phone and my recovery codes. Can Bramblepost support reset my 2FA?",
            "Can't support just turn off two-factor for me?",
        ),
        reference="No. Support cannot; a workspace admin can reset your two-factor setup.",
        topic="resetting two-factor authentication",
        correct=(
            "No, Bramblepost support can't. A workspace admin can reset your two-factor "
            "setup.",
            "Support cannot reset it, but an admin of your workspace can.",
        ),
        unsupported=(
            ("Support can't, but an admin can reset it after verifying your identity with a "
             "video call.",
             "the video-call verification is not in the sources"),
        ),
        contradiction=(
            ("Yes, contact Bramblepost support and they will reset two-factor for you.",
             "support cannot reset 2FA; an admin can"),
        ),
    ),
    Spec(
        key="exports-comments", segment="negation", doc="exports", needs=("exports#3",),
        questions=(
            "Do exports include comments?",
            "Is page history left out of exports?",
        ),
        reference="No, exports include neither comments nor page history; use the API to "
        "fetch those.",
        topic="comments and history in exports",
        correct=(
            "No. Exports don't include comments or page history; you can fetch those through "
            "the API.",
            "Comments and page history are not part of exports. Use the API if you need them.",
        ),
        unsupported=(
            ("Exports leave out comments and history, but you can ask support for a separate "
             "comment archive.",
             "a comment archive from support is not in the sources"),
        ),
        contradiction=(
            ("Comments are included in HTML exports, but not in PDF exports.",
             "exports include no comments at all"),
        ),
    ),
    Spec(
        key="backup-restore-page", segment="negation", doc="data-retention",
        needs=("data-retention#3",), also=("data-retention#1",),
        questions=(
            "Can support restore a single page from a backup?",
            "Is restoring one page from backups not possible?",
        ),
        reference="No. Backups are for disaster recovery only and are not used to restore "
        "individual pages.",
        topic="restoring pages from backups",
        correct=(
            "No. Backups exist for disaster recovery only and are not used to restore "
            "individual pages or workspaces.",
            "That isn't possible: the encrypted backups are kept for disaster recovery only, "
            "not for restoring single pages.",
        ),
        unsupported=(
            ("No, but support can restore a whole space from a backup for a fee.",
             "backups are not used to restore workspaces either; no fee is mentioned"),
        ),
        contradiction=(
            ("Yes, support can restore any page from the last 35 days of backups.",
             "backups are not used to restore individual pages"),
        ),
    ),
    Spec(
        key="sla-on-pro", segment="negation", doc="uptime-sla", needs=("uptime-sla#1",),
        questions=(
            "Does the Pro plan come with an uptime SLA?",
            "Is there no SLA unless we're on Enterprise?",
        ),
        reference="No. Only Enterprise has the 99.9% monthly uptime commitment; Free, Team "
        "and Pro have no SLA.",
        topic="an SLA on the Pro plan",
        correct=(
            "No. Only Enterprise includes an uptime commitment (99.9% monthly); Free, Team and "
            "Pro have no SLA, although they run on the same infrastructure.",
            "The SLA is Enterprise-only (99.9% monthly uptime); Pro has none.",
        ),
        unsupported=(
            ("Pro has no formal SLA, but Pro customers get priority support during outages.",
             "priority support during outages is not in the sources"),
        ),
        contradiction=(
            ("Yes, Pro includes a 99.9% uptime SLA.", "only Enterprise has an SLA"),
        ),
    ),
    Spec(
        key="maintenance-downtime", segment="negation", doc="uptime-sla",
        needs=("uptime-sla#3",),
        questions=(
            "Does scheduled maintenance count against the SLA?",
            "Is planned maintenance excluded from downtime?",
        ),
        reference="No: scheduled maintenance announced at least 72 hours in advance on the "
        "status page does not count as downtime.",
        topic="maintenance and the SLA",
        correct=(
            "No. Scheduled maintenance is announced at least 72 hours in advance on "
            "status.bramblepost.example and does not count as downtime.",
            "Scheduled maintenance, announced 72 hours or more ahead on the status page, is "
            "not counted as downtime.",
        ),
        unsupported=(
            ("Scheduled maintenance doesn't count, and it always happens on Sundays between "
             "02:00 and 04:00 UTC.",
             "the maintenance window is not in the sources"),
        ),
        dropped=(
            ("No, maintenance never counts as downtime.",
             "drops that it must be scheduled and announced 72 hours in advance"),
        ),
        contradiction=(
            ("Yes, every minute of maintenance counts as downtime.",
             "announced maintenance does not count"),
        ),
    ),
    Spec(
        key="discount-enterprise", segment="negation", doc="discounts",
        needs=("discounts#3",), also=("discounts#1",),
        questions=(
            "Can't we get the nonprofit discount on Enterprise?",
            "Is the nonprofit discount available for Enterprise plans?",
        ),
        reference="No, discounts do not apply to Enterprise (or to add-ons); they cover Team "
        "and Pro.",
        topic="nonprofit discounts on Enterprise",
        correct=(
            "No. Discounts do not apply to Enterprise or to add-ons.",
            "Unfortunately not: the nonprofit discount doesn't apply to Enterprise, nor to "
            "add-ons.",
        ),
        unsupported=(
            ("Discounts don't apply to Enterprise, but nonprofits can negotiate a custom "
             "Enterprise quote.",
             "custom nonprofit quotes are not in the sources"),
        ),
        contradiction=(
            ("Yes, nonprofits get 50% off every plan, including Enterprise.",
             "discounts do not apply to Enterprise"),
        ),
    ),
)

UNANSWERABLE: tuple[Spec, ...] = (
    Spec(
        key="student-discount", segment="unanswerable", doc="discounts",
        near=("discounts#1", "discounts#2", "plans#1"),
        questions=(
            "Is there a discount for individual students?",
            "I'm a student. Can I get Pro cheaper?",
        ),
        reference="The help centre does not cover discounts for individual students; it only "
        "describes free Team for accredited schools and universities.",
        topic="discounts for individual students",
        unsupported=(
            ("Yes, students get 50% off Pro with a valid student email address.",
             "no student discount in the help centre"),
            ("Students can use Team for free for up to 100 seats.",
             "free Team is for schools and universities, not individual students"),
        ),
    ),
    Spec(
        key="hipaa", segment="unanswerable", doc="data-residency",
        near=("security-addon#2", "data-residency#3", "data-residency#1"),
        questions=(
            "Will Bramblepost sign a HIPAA BAA?",
            "Is Bramblepost HIPAA compliant?",
        ),
        reference="The help centre does not say anything about HIPAA or business associate "
        "agreements.",
        topic="HIPAA",
        unsupported=(
            ("Yes, Enterprise customers can sign a BAA, and Bramblepost is HIPAA compliant.",
             "HIPAA is not mentioned anywhere"),
            ("Yes, with the Security add-on your workspace becomes HIPAA compliant.",
             "the add-on says nothing about HIPAA"),
        ),
    ),
    Spec(
        key="page-size", segment="unanswerable", doc="storage",
        near=("storage#2", "exports#1", "storage#1"),
        questions=(
            "How many characters can a single page hold?",
            "Is there a maximum length for a page?",
        ),
        reference="The help centre does not give a maximum page length.",
        topic="the maximum length of a page",
        unsupported=(
            ("A page can hold up to 1 million characters.", "no page-length limit is given"),
            ("Pages have no length limit because page text doesn't count towards storage.",
             "storage not counting text doesn't mean there is no length limit"),
        ),
    ),
    Spec(
        key="confluence-import", segment="unanswerable", doc="integrations",
        near=("integrations#1", "exports#1", "exports#2"),
        questions=(
            "Can I import our wiki from Confluence?",
            "Is there a Confluence importer?",
        ),
        reference="The help centre does not describe importing from Confluence or any other "
        "tool.",
        topic="importing from Confluence",
        unsupported=(
            ("Yes, use the Confluence importer under Settings → Import.",
             "no importer is described"),
            ("Yes, Confluence is one of the supported integrations alongside Jira.",
             "the integrations are Slack, Microsoft Teams, GitHub and Jira; no Confluence"),
        ),
    ),
    Spec(
        key="phone-support", segment="unanswerable", doc="uptime-sla",
        near=("uptime-sla#1", "two-factor#3", "data-residency#3"),
        questions=(
            "Do you offer phone support?",
            "Can Enterprise customers call support?",
        ),
        reference="The help centre does not say whether phone support is offered.",
        topic="phone support",
        unsupported=(
            ("Phone support is available on Enterprise, 9:00–17:00 CET on weekdays.",
             "phone support hours are not in the sources"),
        ),
    ),
    Spec(
        key="dark-mode", segment="unanswerable", doc="apps",
        near=("apps#1", "apps#2"),
        questions=(
            "Is there a dark mode in the mobile app?",
            "Does Bramblepost support dark mode?",
        ),
        reference="The help centre does not mention dark mode.",
        topic="dark mode",
        unsupported=(
            ("Yes, the mobile apps follow your system's dark mode setting.",
             "dark mode is not mentioned"),
        ),
    ),
    Spec(
        key="webhook-throughput", segment="unanswerable", doc="webhooks",
        near=("webhooks#2", "webhooks#3", "api-rate-limits#2"),
        questions=(
            "How many webhook deliveries per minute can one endpoint receive?",
            "Is there a rate limit on webhook deliveries?",
        ),
        reference="The help centre gives no delivery rate limit for webhooks.",
        topic="webhook delivery rates",
        unsupported=(
            ("Each endpoint receives at most 100 deliveries per minute.",
             "no delivery rate is given"),
            ("Webhook deliveries follow the API limits: 600 per minute on Pro.",
             "the API limits apply to API requests, not webhook deliveries"),
        ),
    ),
    Spec(
        key="eu-hosting-provider", segment="unanswerable", doc="data-residency",
        near=("data-residency#1", "data-residency#3"),
        questions=(
            "Which cloud provider hosts the EU region?",
            "Is the Frankfurt region on AWS?",
        ),
        reference="The help centre names the regions (Frankfurt, Oregon) but not the hosting "
        "provider.",
        topic="the hosting provider",
        unsupported=(
            ("The EU region runs on AWS eu-central-1 in Frankfurt.",
             "the hosting provider is not named"),
        ),
    ),
    Spec(
        key="pay-in-euros", segment="unanswerable", doc="billing",
        near=("billing#1", "billing#3"),
        questions=(
            "Can we pay in euros?",
            "Which currencies can we be billed in?",
        ),
        reference="The help centre does not say which currencies are accepted; prices are "
        "given in dollars.",
        topic="billing currencies",
        unsupported=(
            ("Yes, you can choose EUR or USD at checkout.", "currencies are not covered"),
            ("Yes, EU customers are billed in euros automatically because of the reverse "
             "charge.",
             "the reverse charge is about VAT, not currency"),
        ),
    ),
    Spec(
        key="on-premises", segment="unanswerable", doc="data-residency",
        near=("data-residency#1", "uptime-sla#1", "data-residency#2"),
        questions=(
            "Is there an on-premises version of Bramblepost?",
            "Can we self-host Bramblepost?",
        ),
        reference="The help centre does not mention an on-premises or self-hosted version.",
        topic="self-hosting",
        unsupported=(
            ("Yes, Enterprise customers can self-host with Bramblepost Server.",
             "no self-hosted version is mentioned"),
        ),
    ),
    Spec(
        key="spaces-limit", segment="unanswerable", doc="roles",
        near=("roles#3", "storage#1", "guests#3"),
        questions=(
            "How many spaces can a Team workspace have?",
            "Is there a limit on the number of spaces?",
        ),
        reference="The help centre gives no limit on the number of spaces.",
        topic="limits on spaces",
        unsupported=(
            ("Team workspaces can have up to 50 spaces; Pro has no limit.",
             "no space limit is given"),
        ),
    ),
    Spec(
        key="referral", segment="unanswerable", doc="discounts",
        near=("discounts#3", "discounts#1", "billing#3"),
        questions=(
            "Do you have a referral programme?",
            "Do we get anything for referring another company?",
        ),
        reference="The help centre does not mention a referral programme.",
        topic="referrals",
        unsupported=(
            ("Yes, you get one free month for each company you refer.",
             "no referral programme is mentioned"),
        ),
    ),
)

SPECS: tuple[Spec, ...] = LOOKUP + MULTI_PAGE + IDENTIFIER + NEGATION + UNANSWERABLE
