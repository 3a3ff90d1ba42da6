# The Floe worker image: Node 22 LTS runs the TypeScript sources directly (type stripping).
FROM node:22-bookworm-slim
WORKDIR /opt/floe
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund
COPY bin ./bin
COPY cli ./cli
COPY protocol ./protocol
COPY coordinator ./coordinator
COPY participant ./participant
COPY shared ./shared
ENV NODE_ENV=production
ENTRYPOINT ["/opt/floe/bin/floe"]
