/**
 * RFC 1123 DNS subdomains as Kubernetes checks them: the prefix of a label key (`gpu-serials.dev` in
 * `gpu-serials.dev/gpu-0`).
 */

const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/

/** Says what is wrong with `text` as a DNS subdomain, or nothing when it is one. */
export const validateDnsSubdomain = (text: string): string | undefined => {
  if (text.length === 0) return "must not be empty"
  if (text.length > 253) return "must be at most 253 characters"
  if (!DNS_SUBDOMAIN.test(text)) {
    return "must be a DNS subdomain: lowercase letters, digits, '-' and '.', starting and ending alphanumeric"
  }
  return undefined
}
