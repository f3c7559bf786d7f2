/** Where a page is read by the public: its custom domain's root, or its path under the product API. */
export function publicUrlOf(productUrl: string, page: { slug: string; customDomain: string | null }): string {
  return page.customDomain ? `https://${page.customDomain}/` : `${productUrl.replace(/\/$/, '')}/api/v1/statuspages/public/${page.slug}/`
}

/**
 * The public address of a page as stored: its custom domain only once verified (decision 0015,
 * "Custom domains"); a claim not yet proven is never a link.
 */
export function publicUrlOfRow(
  productUrl: string,
  page: { slug: string; customDomain: string | null; customDomainVerifiedAt: Date | null },
): string {
  return publicUrlOf(productUrl, { slug: page.slug, customDomain: page.customDomainVerifiedAt ? page.customDomain : null })
}
