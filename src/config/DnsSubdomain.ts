/**
 * RFC 1123 DNS names as Kubernetes checks them: subdomains (the prefix of a label key, `gpu-serials.dev` in
 * `gpu-serials.dev/gpu-0`) and labels (a namespace's name).
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

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/

/** Whether `text` is a DNS-1123 label, as the name of a namespace must be: at most 63 characters. */
export const isDnsLabel = (text: string): boolean => text.length <= 63 && DNS_LABEL.test(text)
