/** Where a page is read by the public: its custom domain's root, or its path under the product API. */
export function publicUrlOf(productUrl: string, page: { slug: string; customDomain: string | null }): string {
  return page.customDomain ? `https://${page.customDomain}/` : `${productUrl.replace(/\/$/, '')}/api/v1/statuspages/public/${page.slug}/`
}
