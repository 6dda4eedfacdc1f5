# The Flex app image, used by docker-compose.yml. The app is stateless: point DATABASE_URL at
# PostgreSQL (the compose file does) and run as many instances as you like.
FROM node:20-bookworm-slim
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY workers ./workers
RUN npm run build
ENV HOST=0.0.0.0 PORT=8080 NODE_ENV=production DATA_DIR=/tmp/flex MQTT_HOST=0.0.0.0
EXPOSE 8080 1883
USER node
CMD ["node", "dist/src/main.js"]
